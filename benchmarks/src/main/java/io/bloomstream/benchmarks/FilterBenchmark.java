package io.bloomstream.benchmarks;

import com.google.common.hash.Funnels;
import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
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
 * accesses are what is measured. Each implementation has its own state, so a trial only builds the
 * structure it measures.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FilterBenchmark {

    static final double FPP = 0.01;
    static final int RING = 1 << 20;

    /** Keys: the first RING members (repeated if fewer) and RING absent keys. */
    @State(Scope.Thread)
    public static class Keys {
        /** 10^5 items fit in L2 (124 KB); 10^8 items (124 MB) are far beyond L3. */
        @Param({"100000", "100000000"})
        public long items;

        long[] members = new long[RING];
        long[] absent = new long[RING];
        int next;

        /** The i-th member key, the same sequence for every implementation. */
        static long member(long i) {
            return new SplittableRandom(i).nextLong();
        }

        @Setup(Level.Trial)
        public void setUp() {
            for (int i = 0; i < RING; i++) {
                members[i] = member(i % items);
                absent[i] = member(-1 - i);
            }
        }

        long nextMember() {
            next = (next + 1) & (RING - 1);
            return members[next];
        }

        long nextAbsent() {
            next = (next + 1) & (RING - 1);
            return absent[next];
        }
    }

    /** bloomstream's filter, filled with the members. */
    @State(Scope.Thread)
    public static class Ours {
        BloomFilter filter;

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            filter = BloomFilter.create(FilterSpec.forItems(keys.items, FPP));
            for (long i = 0; i < keys.items; i++) {
                filter.add(Keys.member(i));
            }
        }
    }

    /** Guava's filter, filled with the members. */
    @State(Scope.Thread)
    public static class Guava {
        com.google.common.hash.BloomFilter<Long> filter;

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            filter =
                    com.google.common.hash.BloomFilter.create(
                            Funnels.longFunnel(), keys.items, FPP);
            for (long i = 0; i < keys.items; i++) {
                filter.put(Keys.member(i));
            }
        }
    }

    /** A long[] as large as our filter, with random content. */
    @State(Scope.Thread)
    public static class Floor {
        long[] array;
        long last;

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            long bits = FilterSpec.forItems(keys.items, FPP).bits();
            array = new long[(int) ((bits + 63) >>> 6)];
            SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < array.length; i++) {
                array[i] = random.nextLong();
            }
        }
    }

    @Benchmark
    public boolean oursMightContainMember(Keys keys, Ours ours) {
        return ours.filter.mightContain(keys.nextMember());
    }

    @Benchmark
    public boolean guavaMightContainMember(Keys keys, Guava guava) {
        return guava.filter.mightContain(keys.nextMember());
    }

    @Benchmark
    public boolean oursMightContainAbsent(Keys keys, Ours ours) {
        return ours.filter.mightContain(keys.nextAbsent());
    }

    @Benchmark
    public boolean guavaMightContainAbsent(Keys keys, Guava guava) {
        return guava.filter.mightContain(keys.nextAbsent());
    }

    @Benchmark
    public boolean oursAdd(Keys keys, Ours ours) {
        return ours.filter.addIfAbsent(keys.nextAbsent());
    }

    @Benchmark
    public boolean guavaAdd(Keys keys, Guava guava) {
        return guava.filter.put(keys.nextAbsent());
    }

    /** The hash alone, to separate hashing from memory access. */
    @Benchmark
    public Hash128 oursHashOnly(Keys keys) {
        return Hasher.defaultHasher().hash(keys.nextAbsent());
    }

    /**
     * The memory latency floor: one random read whose index depends on the previous read, so reads
     * cannot overlap (a pointer chase). An operation that must wait for its one random read cannot
     * beat this; {@link #floorRandomRead} lets many reads overlap.
     */
    @Benchmark
    public long floorDependentRead(Keys keys, Floor floor) {
        long z = (floor.last ^ keys.nextAbsent()) * 0xff51afd7ed558ccdL;
        int index = (int) Math.multiplyHigh(z & Long.MAX_VALUE, (long) floor.array.length << 1);
        floor.last = floor.array[index];
        return floor.last;
    }

    /** The memory floor: one random read, indexed by a cheap mix of the key. */
    @Benchmark
    public long floorRandomRead(Keys keys, Floor floor) {
        long key = keys.nextAbsent();
        long z = (key ^ (key >>> 33)) * 0xff51afd7ed558ccdL;
        int index = (int) Math.multiplyHigh(z & Long.MAX_VALUE, (long) floor.array.length << 1);
        return floor.array[index];
    }
}
