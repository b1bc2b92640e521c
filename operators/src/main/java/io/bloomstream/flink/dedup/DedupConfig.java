package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.filter.Sizing;
import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The configuration of a Bloom filter operator: what each key's filter is sized for, how it grows,
 * and how long it remembers. Immutable and validated; build it with {@link #builder()}.
 *
 * <p>The compound false-positive rate of a key, over all its cascade stages and live retention
 * generations, stays at or below {@link #fpp()}: each generation gets fpp / generations, and each
 * cascade stage within it p (1 - r) r^i of that.
 */
@PublicEvolving
public final class DedupConfig implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default expected distinct ids per key (per shard in global mode: total / shards). */
    public static final long DEFAULT_EXPECTED_ITEMS = 1_000_000;

    /** Default false-positive rate. */
    public static final double DEFAULT_FPP = 0.01;

    /** Default {@link #bundleSize()}: 0, no bundles (see {@link Builder#bundle}). */
    public static final int DEFAULT_BUNDLE_SIZE = 0;

    /** The largest {@link #bundleSize()}. */
    public static final int MAX_BUNDLE_SIZE = 1 << 16;

    /** Default budget of the write-back cache per parallel instance: 64 MiB. */
    public static final long DEFAULT_CACHE_BYTES = 64L << 20;

    /** Default number of retention generations. */
    public static final int DEFAULT_GENERATIONS = 2;

    /**
     * The smallest page that the automatic page size picks for state: each page is one state entry
     * with about 20 bytes of overhead in a checkpoint, so at 1% 512-bit pages took 1.78 bytes of
     * state per distinct id and 2048-bit pages 1.50 (10^6 ids) and 1.355 (10^7). 4096-bit pages
     * take 1.30 and 1.27 but cost heap throughput (0.66x against 0.82x of pass-through in one run
     * at 10^6 ids): pass {@code pageBits(4096)} when state size matters more
     * (benchmarks/RESULTS.md).
     */
    public static final int MIN_AUTO_STATE_PAGE_BITS = 2048;

    /** Default number of virtual keys (shards) in global mode. */
    public static final int DEFAULT_SHARDS = 1024;

    /**
     * The most generation slots a key may need for on-time events: ceil((R + A) / L) + 2 for
     * retention R, allowed lateness A and generation length L (the rest of a key's 64 slots take
     * far-future buckets). Checked when the config is built.
     */
    public static final int MAX_ON_TIME_GENERATIONS = 48;

    /** The longest retention or allowed lateness: 100 years. */
    public static final Duration MAX_DURATION = Duration.ofDays(36_525);

    /** How a key's filter grows past its expected items. */
    public enum Growth {
        /** One filter; past capacity its false-positive rate climbs (a warning is logged). */
        FIXED,
        /** A scalable cascade: the rate stays within the target however many items arrive. */
        SCALABLE
    }

    /** Which clock drives retention. */
    public enum TimeDomain {
        /** Event timestamps and watermarks. */
        EVENT_TIME,
        /** The wall clock of the task manager. */
        PROCESSING_TIME
    }

    private final long expectedItems;
    private final double fpp;
    private final int pageBits;
    private final long seed;
    private final Growth growth;
    private final int growthFactor;
    private final double tightening;
    private final Duration retention;
    private final TimeDomain timeDomain;
    private final int generations;
    private final Duration allowedLateness;
    private final int shards;
    private final boolean emitDuplicates;
    private final long cacheBytes;
    private final int bundleSize;
    private final Duration bundleDelay;

    private DedupConfig(Builder b) {
        this.expectedItems = b.expectedItems;
        this.fpp = b.fpp;
        this.pageBits = b.pageBits;
        this.seed = b.seed;
        this.growth = b.growth;
        this.growthFactor = b.growthFactor;
        this.tightening = b.tightening;
        this.retention = b.retention;
        this.timeDomain = b.timeDomain;
        this.generations = b.generations;
        this.allowedLateness = b.allowedLateness;
        this.shards = b.shards;
        this.emitDuplicates = b.emitDuplicates;
        this.cacheBytes = b.cacheBytes;
        this.bundleSize = b.bundleSize;
        this.bundleDelay = b.bundleDelay;
    }

    /**
     * The budget of each parallel instance's write-back cache of filter state, in bytes (0: none).
     * See {@link Builder#cacheBytes}.
     */
    public long cacheBytes() {
        return cacheBytes;
    }

    /** Events per bundle, 0 when events are judged one at a time; see {@link Builder#bundle}. */
    public int bundleSize() {
        return bundleSize;
    }

    /** The longest an event waits in a bundle (processing time); see {@link Builder#bundle}. */
    public Duration bundleDelay() {
        return bundleDelay;
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Expected distinct ids per key; under retention, the distinct ids per key within one retention
     * period (each generation is sized for its share).
     */
    public long expectedItems() {
        return expectedItems;
    }

    /** Target compound false-positive rate per key. */
    public double fpp() {
        return fpp;
    }

    /** Page size in bits, {@link FilterSpec#CLASSIC} or {@link FilterSpec#AUTO_PAGE_BITS}. */
    public int pageBits() {
        return pageBits;
    }

    /** The XXH3 seed; filters built with different seeds cannot be merged or restored. */
    public long seed() {
        return seed;
    }

    /** The hasher (XXH3-128 with {@link #seed()}). */
    public Hasher hasher() {
        return Hasher.xxh3(seed);
    }

    public Growth growth() {
        return growth;
    }

    /** s, the capacity ratio of consecutive cascade stages. */
    public int growthFactor() {
        return growthFactor;
    }

    /** r, the rate ratio of consecutive cascade stages. */
    public double tightening() {
        return tightening;
    }

    /** How long an id is remembered, or null for ever. */
    public Duration retention() {
        return retention;
    }

    public boolean hasRetention() {
        return retention != null;
    }

    public TimeDomain timeDomain() {
        return timeDomain;
    }

    /**
     * G, the number of filter generations under retention: an id is remembered for at least {@link
     * #retention()} and at most retention * G / (G - 1).
     */
    public int generations() {
        return hasRetention() ? generations : 1;
    }

    /** The retention in whole milliseconds (rounded up), or 0 without retention. */
    public long retentionMillis() {
        if (!hasRetention()) {
            return 0;
        }
        return retention.toMillis() + (retention.toNanos() % 1_000_000 == 0 ? 0 : 1);
    }

    /** The length of one generation: retention / (G - 1), in milliseconds. */
    public long generationMillis() {
        if (!hasRetention()) {
            return 0;
        }
        // Rounded up, so that (G - 1) generations always cover the whole retention.
        long millis = retentionMillis();
        return Math.max(1, (millis + generations - 2) / (generations - 1));
    }

    /**
     * How far behind the watermark an event-time event may be and still be deduplicated: an event
     * with timestamp t is late when t + allowedLateness &lt;= the current watermark, and then goes
     * to the late side output ({@link BloomDedup#lateTag}) instead of being judged. Zero by default
     * (Flink's convention for windows); state is kept that much longer.
     */
    public Duration allowedLateness() {
        return allowedLateness;
    }

    /** Virtual keys of global mode. */
    public int shards() {
        return shards;
    }

    /** Whether duplicates go to a side output (otherwise they are dropped and counted). */
    public boolean emitDuplicates() {
        return emitDuplicates;
    }

    /** The rate budget of one generation: fpp / G. */
    double generationFpp() {
        return fpp / generations();
    }

    /**
     * The ids one generation is sized for. Under retention, expectedItems counts the distinct ids
     * per key that arrive within one retention period; a generation spans 1 / (G - 1) of it, so it
     * is sized for that share (rounded up).
     */
    long generationItems(long itemsPerKey) {
        if (!hasRetention()) {
            return itemsPerKey;
        }
        return Math.max(1, (itemsPerKey + generations - 2) / (generations - 1));
    }

    /** The capacity of cascade stage i. */
    public long stageCapacity(long itemsPerKey, int stage) {
        long items = generationItems(itemsPerKey);
        if (growth == Growth.FIXED) {
            return items;
        }
        return ScalableBloomFilter.stageCapacity(items, growthFactor, stage);
    }

    /**
     * The spec of cascade stage i of one generation of a key sized for {@code itemsPerKey} (in
     * global mode: expectedItems / shards, rounded up): the shape the operator gives that stage.
     * Its state holds the stage as pages of {@link FilterSpec#pageBits()} bits (a classic stage as
     * one page of all its bits).
     */
    public FilterSpec stageSpec(long itemsPerKey, int stage) {
        double p =
                growth == Growth.FIXED
                        ? generationFpp()
                        : ScalableBloomFilter.stageFpp(generationFpp(), tightening, stage);
        long capacity = stageCapacity(itemsPerKey, stage);
        int page = pageBits;
        if (page == FilterSpec.AUTO_PAGE_BITS) {
            page = Sizing.autoPageBits(capacity, p);
            if (page != FilterSpec.CLASSIC && page < MIN_AUTO_STATE_PAGE_BITS) {
                page =
                        Sizing.sizeClassic(capacity, p)[0] > 4L * MIN_AUTO_STATE_PAGE_BITS
                                ? MIN_AUTO_STATE_PAGE_BITS
                                : FilterSpec.CLASSIC;
            }
        }
        return FilterSpec.builder()
                .expectedItems(capacity)
                .fpp(p)
                .pageBits(page)
                .hasher(hasher())
                .build();
    }

    @Override
    public String toString() {
        return "DedupConfig{expectedItems="
                + expectedItems
                + ", fpp="
                + fpp
                + ", pageBits="
                + (pageBits == FilterSpec.AUTO_PAGE_BITS ? "auto" : pageBits)
                + ", seed="
                + seed
                + ", growth="
                + growth
                + (growth == Growth.SCALABLE
                        ? "(s=" + growthFactor + ", r=" + tightening + ")"
                        : "")
                + ", retention="
                + (retention == null
                        ? "forever"
                        : retention
                                + " "
                                + timeDomain
                                + " x"
                                + generations
                                + (allowedLateness.isZero()
                                        ? ""
                                        : ", allowedLateness=" + allowedLateness))
                + ", shards="
                + shards
                + ", emitDuplicates="
                + emitDuplicates
                + ", cacheBytes="
                + cacheBytes
                + (bundleSize == 0 ? "" : ", bundle=" + bundleSize + "/" + bundleDelay)
                + "}";
    }

    /** Builds a {@link DedupConfig}; each setter checks its argument. */
    @PublicEvolving
    public static final class Builder {
        private long expectedItems = DEFAULT_EXPECTED_ITEMS;
        private double fpp = DEFAULT_FPP;
        private int pageBits = FilterSpec.AUTO_PAGE_BITS;
        private long seed = Hasher.DEFAULT_SEED;
        private long cacheBytes = DEFAULT_CACHE_BYTES;
        private int bundleSize = DEFAULT_BUNDLE_SIZE;
        private Duration bundleDelay = Duration.ZERO;
        private Growth growth = Growth.SCALABLE;
        private int growthFactor = ScalableBloomFilter.DEFAULT_GROWTH;
        private double tightening = ScalableBloomFilter.DEFAULT_TIGHTENING;
        private Duration retention;
        private TimeDomain timeDomain = TimeDomain.EVENT_TIME;
        private int generations = DEFAULT_GENERATIONS;
        private Duration allowedLateness = Duration.ZERO;
        private int shards = DEFAULT_SHARDS;
        private boolean emitDuplicates;

        private Builder() {}

        /** Expected distinct ids per key (in global mode: in total). */
        public Builder expectedItems(long expectedItems) {
            if (expectedItems < 1) {
                throw new IllegalArgumentException(
                        "expectedItems must be >= 1, was " + expectedItems);
            }
            this.expectedItems = expectedItems;
            return this;
        }

        /** Target false-positive rate, in (0, 1). */
        public Builder fpp(double fpp) {
            if (!(fpp > 0 && fpp < 1)) {
                throw new IllegalArgumentException("fpp must be in (0, 1), was " + fpp);
            }
            this.fpp = fpp;
            return this;
        }

        /**
         * Page size: a power of two from 64 to 65536 bits, {@link FilterSpec#CLASSIC} or {@link
         * FilterSpec#AUTO_PAGE_BITS} (default: the automatic size of {@link Sizing#autoPageBits},
         * but at least {@link #MIN_AUTO_STATE_PAGE_BITS}, and classic for filters of fewer than
         * four such pages).
         */
        public Builder pageBits(int pageBits) {
            if (pageBits != FilterSpec.CLASSIC
                    && pageBits != FilterSpec.AUTO_PAGE_BITS
                    && !FilterSpec.isPageSize(pageBits)) {
                throw new IllegalArgumentException(
                        "pageBits must be a power of two in [64, 65536], 0 (classic) or -1"
                                + " (auto), was "
                                + pageBits);
            }
            this.pageBits = pageBits;
            return this;
        }

        /** The XXH3 seed (default {@link Hasher#DEFAULT_SEED}). */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * The budget of each parallel instance's write-back cache of filter state (default {@value
         * DedupConfig#DEFAULT_CACHE_BYTES} bytes; 0 turns it off). Events on cached keys read and
         * write plain arrays instead of calling the state backend; changes go to state before every
         * checkpoint barrier, so checkpoints and savepoints are the same as without the cache. Past
         * the budget the least recently used keys are written back and dropped. Count the budget as
         * extra JVM heap per parallel instance on either backend.
         */
        public Builder cacheBytes(long cacheBytes) {
            if (cacheBytes < 0) {
                throw new IllegalArgumentException("cacheBytes must be >= 0, got " + cacheBytes);
            }
            this.cacheBytes = cacheBytes;
            return this;
        }

        /**
         * Judges events in bundles of up to {@code maxEvents}, each waiting at most {@code
         * maxDelay} of processing time (off by default). A bundle is judged in two passes: the
         * first hashes every event and touches its page in the write-back cache, so that the memory
         * misses of the whole bundle overlap; the second judges the events in arrival order,
         * exactly as one at a time, and emits them in that order. A bundle is also judged before
         * every watermark is forwarded, before every checkpoint barrier and at the end of input, so
         * event-time results, checkpoints and exactly-once are unchanged; only latency grows, by at
         * most {@code maxDelay}. Under processing-time retention an event's time is the clock when
         * its bundle is judged.
         *
         * @param maxEvents 2 to {@value DedupConfig#MAX_BUNDLE_SIZE}
         * @param maxDelay positive
         */
        public Builder bundle(int maxEvents, Duration maxDelay) {
            if (maxEvents < 2 || maxEvents > MAX_BUNDLE_SIZE) {
                throw new IllegalArgumentException(
                        "maxEvents must be in [2, " + MAX_BUNDLE_SIZE + "], got " + maxEvents);
            }
            if (maxDelay == null || maxDelay.isNegative() || maxDelay.isZero()) {
                throw new IllegalArgumentException("maxDelay must be positive, got " + maxDelay);
            }
            this.bundleSize = maxEvents;
            this.bundleDelay = maxDelay;
            return this;
        }

        /** Judges each event as it arrives (the default). */
        public Builder noBundles() {
            this.bundleSize = 0;
            this.bundleDelay = Duration.ZERO;
            return this;
        }

        /** One fixed filter per key. */
        public Builder fixed() {
            this.growth = Growth.FIXED;
            return this;
        }

        /** A scalable cascade per key (the default), with growth s and tightening r. */
        public Builder scalable(int growthFactor, double tightening) {
            if (growthFactor < 2 || growthFactor > 16) {
                throw new IllegalArgumentException(
                        "growthFactor must be in [2, 16], was " + growthFactor);
            }
            if (!(tightening > 0 && tightening < 1)) {
                throw new IllegalArgumentException(
                        "tightening must be in (0, 1), was " + tightening);
            }
            this.growth = Growth.SCALABLE;
            this.growthFactor = growthFactor;
            this.tightening = tightening;
            return this;
        }

        /**
         * Remember ids for {@code retention} on the given clock: an id seen again after that passes
         * again, and the state of expired generations is freed.
         */
        public Builder retention(Duration retention, TimeDomain timeDomain) {
            Objects.requireNonNull(retention, "retention");
            Objects.requireNonNull(timeDomain, "timeDomain");
            if (retention.isNegative()
                    || retention.isZero()
                    || retention.compareTo(MAX_DURATION) > 0
                    || retention.toMillis() < 1) {
                throw new IllegalArgumentException(
                        "retention must be from 1 ms to 100 years, was " + retention);
            }
            this.retention = retention;
            this.timeDomain = timeDomain;
            return this;
        }

        /**
         * Filter generations under retention, 2 to 46 (default 2): more make the retention
         * finer-grained (an id is remembered for less than R + R/(G-1)) and cost lookups in more
         * generations. With allowed lateness A, (G - 1)(1 + A/R) + 2 must stay at most {@link
         * #MAX_ON_TIME_GENERATIONS}.
         */
        public Builder generations(int generations) {
            if (generations < 2 || generations > MAX_ON_TIME_GENERATIONS - 2) {
                throw new IllegalArgumentException(
                        "generations must be in [2, "
                                + (MAX_ON_TIME_GENERATIONS - 2)
                                + "], was "
                                + generations);
            }
            this.generations = generations;
            return this;
        }

        /**
         * How late (behind the watermark) an event-time event may arrive and still be judged; later
         * ones go to the late side output. Zero or more, in whole milliseconds (default 0).
         */
        public Builder allowedLateness(Duration allowedLateness) {
            Objects.requireNonNull(allowedLateness, "allowedLateness");
            if (allowedLateness.isNegative() || allowedLateness.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(
                        "allowedLateness must be from 0 to 100 years, was " + allowedLateness);
            }
            this.allowedLateness = allowedLateness;
            return this;
        }

        /** Virtual keys of global mode, 1 to 2^20 (default 1024). */
        public Builder shards(int shards) {
            if (shards < 1 || shards > (1 << 20)) {
                throw new IllegalArgumentException("shards must be in [1, 2^20], was " + shards);
            }
            this.shards = shards;
            return this;
        }

        /** Send duplicates to the side output {@link BloomDedup#duplicatesTag} too. */
        public Builder emitDuplicates(boolean emitDuplicates) {
            this.emitDuplicates = emitDuplicates;
            return this;
        }

        /**
         * Builds the config, checking that a key's filter can be sized.
         *
         * @throws IllegalArgumentException if the filter would exceed what one key can hold
         */
        public DedupConfig build() {
            DedupConfig config = new DedupConfig(this);
            if (config.hasRetention()) {
                long l = config.generationMillis();
                long span = config.retentionMillis() + allowedLateness.toMillis();
                long needed = (span + l - 1) / l + 2;
                if (needed > MAX_ON_TIME_GENERATIONS) {
                    throw new IllegalArgumentException(
                            "generations "
                                    + generations
                                    + " and allowedLateness "
                                    + allowedLateness
                                    + " with retention "
                                    + retention
                                    + " need "
                                    + needed
                                    + " generation slots per key for on-time events, at most "
                                    + MAX_ON_TIME_GENERATIONS
                                    + ": lower generations or allowedLateness");
                }
            }
            try {
                config.stageSpec(expectedItems, 0);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new IllegalArgumentException("cannot size a filter for " + config, e);
            }
            return config;
        }
    }
}
