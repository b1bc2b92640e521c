package io.bloomstream.benchmarks;

import com.google.common.hash.Funnels;
import io.bloomstream.filter.BlockedBloomFilter;
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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
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
 *
 * <p>Issue 13 adds {@link BlockedBloomFilter} (one XXH3-64 hash per key; on the heap and 64-byte
 * aligned off-heap; one at a time and in batches of {@link #BATCH}), FastFilter's Java {@code
 * BlockedBloom} at 10 bits per key, and the batched benchmarks hash their keys inside the measured
 * time, as the single ones do.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FilterBenchmark {

    static final double FPP = 0.01;
    static final int RING = 1 << 20;
    static final int BATCH = 256;

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

        /** The offset of the next BATCH absent keys. */
        int nextAbsentBatch() {
            next = (next + BATCH) & (RING - BATCH);
            return next;
        }
    }

    /** {@link BlockedBloomFilter} on the heap, filled with the members. */
    @State(Scope.Thread)
    public static class Blocked {
        BlockedBloomFilter filter;
        final long[] hashes = new long[BATCH];
        final boolean[] results = new boolean[BATCH];

        BlockedBloomFilter make(FilterSpec spec) {
            return BlockedBloomFilter.create(spec);
        }

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            filter = make(BlockedBloomFilter.specFor(keys.items, FPP));
            for (long i = 0; i < keys.items; i++) {
                filter.add(Keys.member(i));
            }
        }

        int mightContainBatch(long[] keys, int off) {
            for (int i = 0; i < BATCH; i++) {
                hashes[i] = filter.hasher().hash64(keys[off + i]);
            }
            return filter.mightContainHashes(hashes, 0, BATCH, results, 0);
        }

        int addIfAbsentBatch(long[] keys, int off) {
            for (int i = 0; i < BATCH; i++) {
                hashes[i] = filter.hasher().hash64(keys[off + i]);
            }
            return filter.addIfAbsentHashes(hashes, 0, BATCH, results, 0);
        }
    }

    /** {@link BlockedBloomFilter} off-heap, each page on one cache line. */
    @State(Scope.Thread)
    public static class BlockedAligned extends Blocked {
        @Override
        BlockedBloomFilter make(FilterSpec spec) {
            return BlockedBloomFilter.createAligned(spec);
        }
    }

    /** FastFilter's Java blocked Bloom filter at 10 bits per key, built from the members. */
    @State(Scope.Thread)
    public static class FastFilter {
        org.fastfilter.bloom.BlockedBloom filter;

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            long[] members = new long[Math.toIntExact(keys.items)];
            for (int i = 0; i < members.length; i++) {
                members[i] = Keys.member(i);
            }
            filter = org.fastfilter.bloom.BlockedBloom.construct(members, 10);
        }
    }

    /**
     * bloomstream's filter as a library user makes it, {@code BloomFilter.create(n, p)} (the
     * blocked layout since issue 21), filled with the members.
     */
    @State(Scope.Thread)
    public static class Ours {
        BloomFilter filter;

        BloomFilter make(long items) {
            return BloomFilter.create(items, FPP);
        }

        @Setup(Level.Trial)
        public void setUp(Keys keys) {
            filter = make(keys.items);
            for (long i = 0; i < keys.items; i++) {
                filter.add(Keys.member(i));
            }
        }
    }

    /**
     * What {@code BloomFilter.create(n, p)} made before issue 21: {@link FilterSpec#forItems}
     * (XXH3-128, automatic pages, lazy storage).
     */
    @State(Scope.Thread)
    public static class Legacy extends Ours {
        @Override
        BloomFilter make(long items) {
            return BloomFilter.create(FilterSpec.forItems(items, FPP));
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
    public boolean legacyMightContainAbsent(Keys keys, Legacy legacy) {
        return legacy.filter.mightContain(keys.nextAbsent());
    }

    @Benchmark
    public boolean legacyMightContainMember(Keys keys, Legacy legacy) {
        return legacy.filter.mightContain(keys.nextMember());
    }

    @Benchmark
    public boolean oursAdd(Keys keys, Ours ours) {
        return ours.filter.addIfAbsent(keys.nextAbsent());
    }

    @Benchmark
    public boolean guavaAdd(Keys keys, Guava guava) {
        return guava.filter.put(keys.nextAbsent());
    }

    @Benchmark
    public boolean blockedMightContainAbsent(Keys keys, Blocked blocked) {
        return blocked.filter.mightContain(keys.nextAbsent());
    }

    @Benchmark
    public boolean blockedAlignedMightContainAbsent(Keys keys, BlockedAligned blocked) {
        return blocked.filter.mightContain(keys.nextAbsent());
    }

    @Benchmark
    public boolean blockedAlignedAdd(Keys keys, BlockedAligned blocked) {
        return blocked.filter.addIfAbsent(keys.nextAbsent());
    }

    /** Per key: hash BATCH keys, then one batched lookup. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int blockedMightContainBatch(Keys keys, Blocked blocked) {
        return blocked.mightContainBatch(keys.absent, keys.nextAbsentBatch());
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int blockedAlignedMightContainBatch(Keys keys, BlockedAligned blocked) {
        return blocked.mightContainBatch(keys.absent, keys.nextAbsentBatch());
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int blockedAlignedAddBatch(Keys keys, BlockedAligned blocked) {
        return blocked.addIfAbsentBatch(keys.absent, keys.nextAbsentBatch());
    }

    @Benchmark
    public boolean fastFilterMightContainAbsent(Keys keys, FastFilter fastFilter) {
        return fastFilter.filter.mayContain(keys.nextAbsent());
    }

    /** The 64-bit hash alone (XXH3-64 of a long, no allocation). */
    @Benchmark
    public long blockedHashOnly(Keys keys) {
        return HASHER_64.hash64(keys.nextAbsent());
    }

    private static final Hasher HASHER_64 = Hasher.xxh3_64(Hasher.DEFAULT_SEED);

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
