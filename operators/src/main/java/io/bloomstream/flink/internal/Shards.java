package io.bloomstream.flink.internal;

import io.bloomstream.filter.FilterSpec;
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
     * The shard of an event: SplitMix64 of {@link IdSelector#shardHash} (the id's own cheap hash),
     * reduced to [0, shards). It does not hash the id with XXH3, which the dedup function does
     * once; the page inside the shard comes from that XXH3 hash, so the two are independent.
     */
    public static final class Selector<T> implements KeySelector<T, Integer> {
        private static final long serialVersionUID = 1L;
        private final IdSelector<T> id;
        private final int shards;

        public Selector(IdSelector<T> id, int shards) {
            this.id = id;
            this.shards = shards;
        }

        @Override
        public Integer getKey(T event) {
            return shardOf(FilterSpec.mix(id.shardHash(event)), shards);
        }
    }
}
