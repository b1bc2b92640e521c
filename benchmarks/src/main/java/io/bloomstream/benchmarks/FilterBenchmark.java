package io.bloomstream.benchmarks;

import com.google.common.hash.Funnels;
import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterSpec;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * add and mightContain of bloomstream's {@link BloomFilter} against Guava's at the same n and p
 * (1%), and the memory floor: one random read per operation from a long[] as large as our filter.
 * Keys are random longs; both filters hash them (XXH3-128 here, Murmur3-128 in Guava). Each
 * operation takes the next key of a 2^20-key ring, so the key array stays in cache and the filter
 * accesses are what is measured.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FilterBenchmark {

    static final double FPP = 0.01;
    static final int RING = 1 << 20;

    /** 10^5 items fit in L2 (124 KB); 10^8 items (124 MB) are far beyond L3. */
    @Param({"100000", "100000000"})
    public long items;

    private BloomFilter ours;
    private com.google.common.hash.BloomFilter<Long> guava;
    private long[] floor;
    private long[] members;
    private long[] absent;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        ours = BloomFilter.create(FilterSpec.forItems(items, FPP));
        guava = com.google.common.hash.BloomFilter.create(Funnels.longFunnel(), items, FPP);
        floor = new long[(int) ((ours.spec().bits() + 63) >>> 6)];
        SplittableRandom random = new SplittableRandom(42);
        members = new long[RING];
        absent = new long[RING];
        for (long i = 0; i < items; i++) {
            long key = random.nextLong();
            ours.add(key);
            guava.put(key);
            if (i < RING) {
                members[(int) i] = key;
            }
        }
        for (int i = 0; i < RING; i++) {
            if (i >= items) {
                members[i] = members[(int) (i % items)];
            }
            absent[i] = random.nextLong();
            floor[random.nextInt(floor.length)] = random.nextLong();
        }
    }

    private long nextMember() {
        next = (next + 1) & (RING - 1);
        return members[next];
    }

    private long nextAbsent() {
        next = (next + 1) & (RING - 1);
        return absent[next];
    }

    @Benchmark
    public boolean oursMightContainMember() {
        return ours.mightContain(nextMember());
    }

    @Benchmark
    public boolean guavaMightContainMember() {
        return guava.mightContain(nextMember());
    }

    @Benchmark
    public boolean oursMightContainAbsent() {
        return ours.mightContain(nextAbsent());
    }

    @Benchmark
    public boolean guavaMightContainAbsent() {
        return guava.mightContain(nextAbsent());
    }

    @Benchmark
    public boolean oursAdd() {
        return ours.addIfAbsent(nextMember());
    }

    @Benchmark
    public boolean guavaAdd() {
        return guava.put(nextMember());
    }

    /** The memory floor: one dependent-free random read, indexed by a cheap mix of the key. */
    @Benchmark
    public long floorRandomRead() {
        long key = nextAbsent();
        long z = (key ^ (key >>> 33)) * 0xff51afd7ed558ccdL;
        int index = (int) Math.multiplyHigh(z & Long.MAX_VALUE, (long) floor.length << 1);
        return floor[index];
    }
}
