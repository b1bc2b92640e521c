package io.bloomstream.flink.count;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.OperatorUids;
import io.bloomstream.flink.internal.Shards;
import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The configuration of a distinct-count operator ({@link BloomCount}, {@link BloomOverlap}): the
 * filter of each key ({@link FilterSizing}: expected items, rate, page size, seed, growth), the
 * shards of a global count, and when estimates are emitted. Immutable and validated; build it with
 * {@link #builder()}.
 */
@PublicEvolving
public final class CountConfig implements Serializable {

    private static final long serialVersionUID = 2L;

    /**
     * The hash strategy of count and overlap when the config sets none: {@link
     * HashStrategy#XXH3_64}, one 64-bit hash per id that chooses a global count's shard, the page
     * and the bits, computed without allocating (as {@link
     * io.bloomstream.flink.dedup.DedupConfig#DEFAULT_HASH_STRATEGY}). State written with {@link
     * HashStrategy#XXH3_128} (bloomstream 0.4 and before) restores only with {@code
     * hashStrategy(HashStrategy.XXH3_128)}: the strategy recorded in each key's metadata is checked
     * on restore.
     */
    public static final HashStrategy DEFAULT_HASH_STRATEGY = HashStrategy.XXH3_64;

    /** Default emission interval. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofMinutes(1);

    /** Default number of virtual keys (shards) of a global count. */
    public static final int DEFAULT_SHARDS = 1024;

    /** Default number of tumbling windows a key may have open at once (windowed variant). */
    public static final int DEFAULT_OPEN_WINDOWS = 4;

    private final FilterSizing filter;
    private final int shards;
    private final Duration interval;
    private final TimeDomain timeDomain;
    private final boolean onChangeOnly;
    private final Duration window;
    private final int openWindows;
    private final String uidPrefix;
    private final HashStrategy hashStrategy;

    private CountConfig(Builder b) {
        this.filter = b.filter;
        this.shards = b.shards;
        this.interval = b.interval;
        this.timeDomain = b.timeDomain;
        this.onChangeOnly = b.onChangeOnly;
        this.window = b.window;
        this.openWindows = b.openWindows;
        this.uidPrefix = b.uidPrefix;
        this.hashStrategy = b.hashStrategy;
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The filter of each key (of each window, in the windowed variant). */
    public FilterSizing filter() {
        return filter;
    }

    /** Virtual keys of a global count ({@link BloomCount#global}). */
    public int shards() {
        return shards;
    }

    /** How often each key's estimate is emitted (not used by the windowed variant). */
    public Duration interval() {
        return interval;
    }

    /** The clock of emission (and of windows). */
    public TimeDomain timeDomain() {
        return timeDomain;
    }

    /** Whether a key's estimate is emitted only when its filter changed since the last one. */
    public boolean onChangeOnly() {
        return onChangeOnly;
    }

    /** The tumbling window, or null for running counts. */
    public Duration window() {
        return window;
    }

    /** Windows a key may have open at once; an event of a newer one closes the oldest early. */
    public int openWindows() {
        return openWindows;
    }

    /**
     * The uid and name of the operator, and the prefix of the helper operators it adds; null (the
     * default) for the operator's own default, {@link BloomCount#DEFAULT_UID} or {@link
     * BloomOverlap#DEFAULT_UID}.
     */
    public String uidPrefix() {
        return uidPrefix;
    }

    /** The hash strategy of the filters ({@link #DEFAULT_HASH_STRATEGY} unless set). */
    public HashStrategy hashStrategy() {
        return hashStrategy;
    }

    /**
     * The hasher: {@link #hashStrategy()} with the filter's {@link FilterSizing#seed() seed}.
     * Creating an XXH3 hasher derives its secret from the seed: call it once per task, not per
     * event.
     */
    public Hasher hasher() {
        return Hasher.forUnkeyed(hashStrategy, filter.seed());
    }

    /** {@link #uidPrefix()}, or {@code defaultPrefix} when not set. */
    String uidPrefixOr(String defaultPrefix) {
        return uidPrefix != null ? uidPrefix : defaultPrefix;
    }

    /** The first emission boundary (a multiple of the interval) after {@code time}. */
    long nextTick(long time) {
        long interval = this.interval.toMillis();
        return (Math.floorDiv(time, interval) + 1) * interval;
    }

    @Override
    public String toString() {
        return "CountConfig{filter={"
                + filter
                + "}, shards="
                + shards
                + ", interval="
                + interval
                + ", timeDomain="
                + timeDomain
                + ", onChangeOnly="
                + onChangeOnly
                + ", window="
                + window
                + ", openWindows="
                + openWindows
                + (uidPrefix == null ? "" : ", uidPrefix=" + uidPrefix)
                + ", hash="
                + hashStrategy
                + "}";
    }

    /** Builds a {@link CountConfig}. */
    public static final class Builder {
        private FilterSizing filter = FilterSizing.builder().build();
        private int shards = DEFAULT_SHARDS;
        private Duration interval = DEFAULT_INTERVAL;
        private TimeDomain timeDomain = TimeDomain.PROCESSING_TIME;
        private boolean onChangeOnly;
        private Duration window;
        private int openWindows = DEFAULT_OPEN_WINDOWS;
        private String uidPrefix;
        private HashStrategy hashStrategy = DEFAULT_HASH_STRATEGY;

        private Builder() {}

        /**
         * The filter of each key: expected distinct items (in total for a global count), rate,
         * growth (default: 10^6 items at 1%, scalable).
         */
        public Builder filter(FilterSizing filter) {
            this.filter = Objects.requireNonNull(filter, "filter");
            return this;
        }

        /** Virtual keys of a global count, 1 to 2^20 (default 1024). */
        public Builder shards(int shards) {
            this.shards = Shards.check(shards);
            return this;
        }

        /** Emission interval (default 1 minute), at least 1 ms. */
        public Builder interval(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.toMillis() < 1) {
                throw new IllegalArgumentException("interval must be >= 1 ms, was " + interval);
            }
            this.interval = interval;
            return this;
        }

        /** The clock of emission and windows (default processing time). */
        public Builder timeDomain(TimeDomain timeDomain) {
            this.timeDomain = Objects.requireNonNull(timeDomain, "timeDomain");
            return this;
        }

        /** Emit a key's estimate only when its filter changed (default false). */
        public Builder onChangeOnly(boolean onChangeOnly) {
            this.onChangeOnly = onChangeOnly;
            return this;
        }

        /** Count per tumbling window of this size instead of running counts. */
        public Builder window(Duration window) {
            Objects.requireNonNull(window, "window");
            if (window.toMillis() < 1) {
                throw new IllegalArgumentException("window must be >= 1 ms, was " + window);
            }
            this.window = window;
            return this;
        }

        /** Windows a key may have open at once (default 4, 1..64). */
        public Builder openWindows(int openWindows) {
            if (openWindows < 1 || openWindows > 64) {
                throw new IllegalArgumentException(
                        "openWindows must be in [1, 64], was " + openWindows);
            }
            this.openWindows = openWindows;
            return this;
        }

        /**
         * The uid and name of the counting (or overlap) operator; {@link BloomCount#global} names
         * its summing operator with this prefix and {@code -sum}. Default: {@link
         * BloomCount#DEFAULT_UID} or {@link BloomOverlap#DEFAULT_UID}, which keep the uids of
         * earlier releases. Give each count of a job its own prefix.
         *
         * @throws IllegalArgumentException if the prefix is blank
         */
        public Builder uidPrefix(String uidPrefix) {
            this.uidPrefix = OperatorUids.checkPrefix(uidPrefix);
            return this;
        }

        /**
         * The hash strategy (default {@link CountConfig#DEFAULT_HASH_STRATEGY}, {@link
         * HashStrategy#XXH3_64}). Set {@link HashStrategy#XXH3_128} to restore state written by
         * bloomstream 0.4 or before, which hashed with it: a restore under another strategy fails
         * naming both strategies. It also routes a global count's ids to shards, so a savepoint of
         * a global count restores only under its own strategy.
         *
         * @throws IllegalArgumentException for a keyed strategy (the operators take no secret key)
         */
        public Builder hashStrategy(HashStrategy hashStrategy) {
            Objects.requireNonNull(hashStrategy, "hashStrategy");
            if (hashStrategy.isKeyed()) {
                throw new IllegalArgumentException(
                        "hashStrategy must be XXH3_64 or XXH3_128, was " + hashStrategy);
            }
            this.hashStrategy = hashStrategy;
            return this;
        }

        /** The config. */
        public CountConfig build() {
            // The smallest filter it may serve: a shard's share of a global count; a per-key
            // count checks the whole expectedItems when the operator is added.
            filter.checkFits(
                    Shards.itemsPerShard(filter.expectedItems(), shards),
                    filter.fpp(),
                    Shards.describe(filter.expectedItems(), shards, "a global count"));
            return new CountConfig(this);
        }
    }
}
