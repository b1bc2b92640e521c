package io.bloomstream.flink.internal;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.IdSelector;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * The virtual keys (shards) of global mode, shared by global dedup and global counts: which shard
 * an event goes to, and how many ids each shard's filter is sized for. The shard of an id is part
 * of the savepoint contract of global mode: a change would route ids to other shards.
 */
@Internal
public final class Shards {

    /** The most shards: 2^20. */
    public static final int MAX_SHARDS = 1 << 20;

    private Shards() {}

    /**
     * Checks a shard count.
     *
     * @throws IllegalArgumentException unless it is in [1, 2^20]
     */
    public static int check(int shards) {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new IllegalArgumentException("shards must be in [1, 2^20], was " + shards);
        }
        return shards;
    }

    /** A shard's filter, as messages name it: "each of the 1024 shards of global mode (...)". */
    public static String describe(long expectedItems, int shards, String mode) {
        return "each of the "
                + shards
                + " shards of "
                + mode
                + " (expectedItems "
                + expectedItems
                + " / "
                + shards
                + " plus headroom = "
                + itemsPerShard(expectedItems, shards)
                + " ids)";
    }

    /**
     * The capacity of each shard's filter for {@code expectedItems} ids over {@code shards} shards:
     * the mean m = ceil(n/s) plus 4 sqrt(m). Ids fall into shards binomially (sd about sqrt(m)), so
     * with capacity m alone half the shards would pass it at the expected total (a second cascade
     * stage, or a higher rate under fixed growth); the fullest of 1024 shards is about m + 3.2 sd.
     * The headroom costs 4/sqrt(m) of state: 13% at 10^6 ids over 1024 shards, 4% at 10^7, 1.3% at
     * 10^8.
     */
    public static long itemsPerShard(long expectedItems, int shards) {
        long mean = Math.max(1, (expectedItems + shards - 1) / shards);
        return mean + (long) Math.ceil(4 * Math.sqrt(mean));
    }

    /** The shard in [0, shards) of an id whose mixed shard hash is {@code h2}. */
    public static int shardOf(long h2, int shards) {
        return (int) (((h2 >>> 32) * shards) >>> 32);
    }

    /**
     * The shard in [0, shards) of an id whose 64-bit hash is {@code h} (under {@link
     * io.bloomstream.filter.HashStrategy#XXH3_64}): its low 32 bits, reduced by a multiply-shift.
     * The page inside the shard takes the top bits of h ({@link FilterSpec#page}) and the bit
     * positions a bijective re-mix of all of h, so for a hash whose bits are independent the shard,
     * the page and the positions are independent.
     */
    public static int shardOf64(long h, int shards) {
        return (int) (((h & 0xFFFFFFFFL) * shards) >>> 32);
    }

    /**
     * The shard of an event. Under a 64-bit hasher ({@link Hasher#is64Bit()}): {@link #shardOf64}
     * of the id's 64-bit hash, the same hash the dedup function judges the id by (global dedup
     * hashes each id once, before its {@code keyBy}, and routes a {@link HashedEvent} by the hash
     * it carries; the dedup operator judges by that hash). Shard keys are interned {@code Integer}s
     * (no allocation per event). Under a 128-bit hasher (state written by bloomstream 0.4 and
     * before): SplitMix64 of {@link IdSelector#shardHash} (the id's own cheap hash), reduced to [0,
     * shards). It does not hash the id with XXH3, which the dedup function does once; the page
     * inside the shard comes from that XXH3 hash, so the two are independent.
     */
    public static final class Selector<T> implements KeySelector<T, Integer> {
        private static final long serialVersionUID = 2L;
        private final IdSelector<T> id;
        private final int shards;

        /** Whether ids are routed by their 64-bit hash; if so, under this seed. */
        private final boolean by64;

        private final long seed;

        private transient Hasher hasher;
        private transient Integer[] keys;
        private transient long[] scratch;

        /** Routing of state written with a 128-bit strategy (XXH3-128): by the id's shardHash. */
        public Selector(IdSelector<T> id, int shards) {
            this(id, shards, null);
        }

        /**
         * Routing by the id's hash under {@code hasher} when it is 64-bit, else as {@link
         * #Selector(IdSelector, int)}.
         */
        public Selector(IdSelector<T> id, int shards, Hasher hasher) {
            this.id = id;
            this.shards = shards;
            this.by64 = hasher != null && hasher.is64Bit();
            this.seed = hasher == null ? 0 : hasher.seed();
        }

        /**
         * The event's shard; an event that comes with its id's hash ({@link HashedEvent}, made by
         * global mode's step before its {@code keyBy} under the same hasher) by that hash.
         */
        @Override
        public Integer getKey(T event) {
            if (event instanceof HashedEvent<?> carried) {
                ensureKeys();
                return keys[carried.valid ? shardOf64(carried.hash, shards) : 0];
            }
            if (!by64) {
                return shardOf(FilterSpec.mix(id.shardHash(event)), shards);
            }
            ensureKeys();
            boolean valid = id.hash64(event, hasher, scratch);
            return keys[valid ? shardOf64(scratch[0], shards) : 0];
        }

        private void ensureKeys() {
            if (keys == null) {
                hasher = Hasher.xxh3_64(seed);
                keys = new Integer[shards];
                for (int i = 0; i < shards; i++) {
                    keys[i] = i;
                }
                scratch = new long[1];
            }
        }

        /** Whether ids are routed by their 64-bit hash ({@link #shardOf64}). */
        public boolean by64() {
            return by64;
        }

        /** The shard count. */
        public int shards() {
            return shards;
        }
    }
}
