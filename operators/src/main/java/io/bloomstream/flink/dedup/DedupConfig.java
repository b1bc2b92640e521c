package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.Retention;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.Shards;
import java.io.Serializable;
import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The configuration of the dedup operator: each key's filter ({@link FilterSizing}: expected items,
 * rate, page size, seed, growth), how long it remembers ({@link Retention}, optional), global
 * mode's shards, the duplicates output, which occurrence of an id passes ({@link FirstBy}), and the
 * write-back cache and bundles. Immutable and validated; build it with {@link #builder()}, whose
 * setters for the sizing and the retention are shortcuts for building those.
 *
 * <p>The compound false-positive rate of a key, over all its cascade stages and live retention
 * generations, stays at or below {@link #fpp()}: each generation gets fpp / generations, which its
 * cascade stages share ({@link #DEFAULT_FIRST_STAGE_SHARE}, {@link #DEFAULT_TIGHTENING}).
 */
@PublicEvolving
public final class DedupConfig implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default expected distinct ids per key (per shard in global mode: total / shards). */
    public static final long DEFAULT_EXPECTED_ITEMS = FilterSizing.DEFAULT_EXPECTED_ITEMS;

    /** Default false-positive rate. */
    public static final double DEFAULT_FPP = FilterSizing.DEFAULT_FPP;

    /**
     * Default share a of the rate budget spent on a cascade's first stage ({@link
     * FilterSizing.Builder#firstStageShare}); its cost: docs/dedup.md#why-the-defaults.
     */
    public static final double DEFAULT_FIRST_STAGE_SHARE = 0.9;

    /**
     * Default rate ratio r of consecutive later cascade stages (stage i >= 1 at p (1 - a) (1 - r)
     * r^(i-1)); bits per item past the expected items: docs/dedup.md#why-the-defaults.
     */
    public static final double DEFAULT_TIGHTENING = 0.7;

    /**
     * Default {@link #bundleSize()}: a bundle overlaps its events' memory misses, and 256 pages of
     * 512 bits (16 KiB) stay in L1 and L2 while it is judged; cost: docs/dedup.md#why-the-defaults.
     */
    public static final int DEFAULT_BUNDLE_SIZE = 256;

    /** Default {@link #bundleDelay()}: 10 ms, the longest an event waits on a slow stream. */
    public static final Duration DEFAULT_BUNDLE_DELAY = Duration.ofMillis(10);

    /** The largest {@link #bundleSize()}. */
    public static final int MAX_BUNDLE_SIZE = 1 << 16;

    /**
     * The least budget of a parallel instance's write-back cache sized automatically, and that of
     * per-key dedup, whose state (the stream's keys) is not known in advance: 64 MiB.
     */
    public static final long DEFAULT_CACHE_BYTES = 64L << 20;

    /** {@link #cacheBytes()} unless set: sized as the operator opens ({@link #cacheBytesFor}). */
    public static final long AUTO_CACHE_BYTES = -1;

    /**
     * The hash strategy of {@link BloomDedup}'s operators when none is set, {@link
     * HashStrategy#XXH3_64}: one 64-bit hash per id that chooses the shard, the page and the bits,
     * computed without allocating; restoring older state: {@link Builder#hashStrategy}. The SQL
     * function BLOOM_DEDUP hashes new keys with it, and each restored key with the strategy its
     * state records.
     */
    public static final HashStrategy DEFAULT_HASH_STRATEGY = HashStrategy.XXH3_64;

    /** Default number of virtual keys (shards) in global mode. */
    public static final int DEFAULT_SHARDS = 1024;

    private final FilterSizing sizing;
    private final Retention retention;
    private final int shards;
    private final boolean emitDuplicates;
    private final boolean resetRetentionOnDuplicate;
    private final boolean exact;
    private final long cacheBytes;
    private final int bundleSize;
    private final Duration bundleDelay;
    private final HashStrategy hashStrategy;
    private final FirstBy firstBy;
    private final Duration latenessWithoutRetention; // of FirstBy.EVENT_TIME without retention

    private DedupConfig(DedupDraft d) {
        this.retention = d.checkedRetention(); // its errors come first
        this.sizing = d.sizing.build();
        this.shards = d.shards;
        this.emitDuplicates = d.emitDuplicates;
        this.resetRetentionOnDuplicate = d.resetRetentionOnDuplicate;
        this.exact = d.exact;
        this.cacheBytes = d.cacheBytes;
        this.bundleSize = d.bundleSize;
        this.bundleDelay = d.bundleDelay;
        this.hashStrategy = d.hashStrategy;
        this.firstBy = d.firstBy;
        this.latenessWithoutRetention = d.allowedLateness;
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Each key's filter: expected items, rate, page size, seed, growth. */
    public FilterSizing sizing() {
        return sizing;
    }

    /** How long ids are remembered, or null for ever. */
    public Retention retentionPolicy() {
        return retention;
    }

    /** The cache budget, 0 or {@link #AUTO_CACHE_BYTES}; see {@link Builder#cacheBytes}. */
    public long cacheBytes() {
        return cacheBytes;
    }

    /**
     * The cache budget of a parallel instance that will hold about {@code expectedStateBytes} of
     * filter state (0: not known) in a JVM whose maximum heap is {@code maxHeapBytes}: the
     * configured {@link #cacheBytes()}, or when sized automatically that state plus a quarter, at
     * least {@link #DEFAULT_CACHE_BYTES} and at most a quarter of the heap (never less than the
     * default). A cache smaller than the state it serves thrashes when ids hit every key: each miss
     * writes a key's pages back and reads another's.
     */
    public long cacheBytesFor(long expectedStateBytes, long maxHeapBytes) {
        if (cacheBytes != AUTO_CACHE_BYTES) {
            return cacheBytes;
        }
        long wanted = expectedStateBytes + expectedStateBytes / 4;
        return Math.max(DEFAULT_CACHE_BYTES, Math.min(wanted, maxHeapBytes / 4));
    }

    /** Events per bundle, 0 when events are judged one at a time; see {@link Builder#bundle}. */
    public int bundleSize() {
        return bundleSize;
    }

    /** The longest an event waits in a bundle (processing time); see {@link Builder#bundle}. */
    public Duration bundleDelay() {
        return bundleDelay;
    }

    /** Expected distinct ids per key; see {@link Builder#expectedItems}. */
    public long expectedItems() {
        return sizing.expectedItems();
    }

    /** Target compound false-positive rate per key. */
    public double fpp() {
        return sizing.fpp();
    }

    /** Page size in bits, {@link FilterSpec#CLASSIC} or {@link FilterSpec#AUTO_PAGE_BITS}. */
    public int pageBits() {
        return sizing.pageBits();
    }

    /** The XXH3 seed; filters built with different seeds cannot be merged or restored. */
    public long seed() {
        return sizing.seed();
    }

    /** How ids are hashed; see {@link Builder#hashStrategy}. */
    public HashStrategy hashStrategy() {
        return hashStrategy;
    }

    /**
     * The hasher of {@link #hashStrategy()} and {@link #seed()}; make it once and keep it: an XXH3
     * hasher derives its secret from the seed.
     */
    public Hasher hasher() {
        return Hasher.forUnkeyed(hashStrategy, seed());
    }

    /** How a key's filter grows past its expected items. */
    public FilterSizing.Growth growth() {
        return sizing.growth();
    }

    /** How long an id is remembered, or null for ever. */
    public Duration retention() {
        return retention == null ? null : retention.duration();
    }

    public boolean hasRetention() {
        return retention != null;
    }

    /** The clock of the retention (event time when there is none). */
    public TimeDomain timeDomain() {
        return retention == null ? TimeDomain.EVENT_TIME : retention.timeDomain();
    }

    /** G, the filter generations (1 without retention); see {@link Builder#generations}. */
    public int generations() {
        return retention == null ? 1 : retention.generations();
    }

    /** The retention in whole milliseconds (rounded up), or 0 without retention. */
    public long retentionMillis() {
        return retention == null ? 0 : retention.millis();
    }

    /** The length of one generation: retention / (G - 1), in milliseconds (0 without retention). */
    public long generationMillis() {
        return retention == null ? 0 : retention.generationMillis();
    }

    /** How late an event may be and still be judged; see {@link Builder#allowedLateness}. */
    public Duration allowedLateness() {
        if (retention == null) {
            return firstBy == FirstBy.EVENT_TIME ? latenessWithoutRetention : Duration.ZERO;
        }
        return retention.allowedLateness();
    }

    /** Which occurrence of an id passes; see {@link Builder#firstBy}. */
    public FirstBy firstBy() {
        return firstBy;
    }

    /** Virtual keys of global mode. */
    public int shards() {
        return shards;
    }

    /** Whether duplicates go to a side output (otherwise they are dropped and counted). */
    public boolean emitDuplicates() {
        return emitDuplicates;
    }

    /** Whether a duplicate refreshes its id; see {@link Builder#resetRetentionOnDuplicate}. */
    public boolean resetRetentionOnDuplicate() {
        return resetRetentionOnDuplicate;
    }

    /** Exact mode: no first occurrence is ever dropped; see {@link Builder#exact}. */
    public boolean exact() {
        return exact;
    }

    /** The ids one generation is sized for (all of them without retention). */
    long generationItems(long itemsPerKey) {
        return retention == null ? itemsPerKey : retention.generationItems(itemsPerKey);
    }

    /** Checks that a filter for itemsPerKey ids can be made: {@link DedupDraft#checkFits}. */
    void checkFits(long itemsPerKey, boolean global) {
        DedupDraft.checkFits(this, itemsPerKey, global);
    }

    /** The capacity of cascade stage i of one generation of a key sized for itemsPerKey. */
    public long stageCapacity(long itemsPerKey, int stage) {
        return sizing.stageCapacity(generationItems(itemsPerKey), stage);
    }

    /**
     * The spec the operator gives cascade stage i of one generation of a key sized for {@code
     * itemsPerKey} (global mode: expectedItems / shards, rounded up), at its rate budget fpp / G.
     */
    public FilterSpec stageSpec(long itemsPerKey, int stage) {
        return sizing.stageSpec(generationItems(itemsPerKey), fpp() / generations(), stage);
    }

    @Override
    public String toString() {
        return DedupDraft.describe(this);
    }

    /** Builds a {@link DedupConfig}; each setter checks its argument. */
    @PublicEvolving
    public static final class Builder {
        private final DedupDraft draft = new DedupDraft();

        private Builder() {}

        /**
         * How ids are hashed (default {@link DedupConfig#DEFAULT_HASH_STRATEGY}, {@link
         * HashStrategy#XXH3_64}). Set {@link HashStrategy#XXH3_128} to restore state written by
         * bloomstream 0.4 or before, which hashed with it: a restore under another strategy fails
         * naming the field {@code strategy}, since every id would be looked up at other bits (and,
         * in global mode, in another shard).
         *
         * @throws IllegalArgumentException for a keyed strategy (the operators take no secret key)
         */
        public Builder hashStrategy(HashStrategy hashStrategy) {
            draft.hashStrategy(hashStrategy);
            return this;
        }

        /**
         * Expected distinct ids per key (in global mode: in total); under retention, within one
         * retention period (each generation is sized for its share).
         */
        public Builder expectedItems(long expectedItems) {
            draft.sizing.expectedItems(expectedItems);
            return this;
        }

        /** Target false-positive rate, in (0, 1). */
        public Builder fpp(double fpp) {
            draft.sizing.fpp(fpp);
            return this;
        }

        /**
         * Page size ({@link FilterSizing.Builder#pageBits}; default: the automatic size, at least
         * {@link FilterSizing#MIN_AUTO_STATE_PAGE_BITS}, classic below four such pages).
         */
        public Builder pageBits(int pageBits) {
            draft.sizing.pageBits(pageBits);
            return this;
        }

        /** The XXH3 seed (default {@link Hasher#DEFAULT_SEED}). */
        public Builder seed(long seed) {
            draft.sizing.seed(seed);
            return this;
        }

        /**
         * The budget of each parallel instance's write-back cache of filter state, in bytes (0
         * turns it off). Changes go to state before every checkpoint barrier, so checkpoints and
         * savepoints are the same as without the cache. Past the budget the least recently used
         * keys are written back and dropped. Count the budget as extra JVM heap per parallel
         * instance on either backend.
         *
         * <p>Default: sized when the operator opens ({@link DedupConfig#cacheBytesFor}) from the
         * state of global dedup's shards on the instance (10^8 ids at 1% on one: about 171 MiB);
         * per-key dedup gets {@value DedupConfig#DEFAULT_CACHE_BYTES} bytes.
         */
        public Builder cacheBytes(long cacheBytes) {
            draft.cacheBytes(cacheBytes);
            return this;
        }

        /**
         * Judges events in bundles of up to {@code maxEvents}, each waiting at most {@code
         * maxDelay} of processing time (default: {@value DedupConfig#DEFAULT_BUNDLE_SIZE} events or
         * 10 ms; {@link #noBundles()} turns them off). A bundle's events are judged and emitted in
         * arrival order, exactly as one at a time. A bundle is also judged before every watermark
         * is forwarded, before every checkpoint barrier and at the end of input, so event-time
         * results, checkpoints and exactly-once are unchanged; only latency grows, by at most
         * {@code maxDelay}. Under processing-time retention an event's time is the clock when its
         * bundle is judged.
         *
         * @param maxEvents 2 to {@value DedupConfig#MAX_BUNDLE_SIZE}
         * @param maxDelay positive
         */
        public Builder bundle(int maxEvents, Duration maxDelay) {
            draft.bundle(maxEvents, maxDelay);
            return this;
        }

        /**
         * Judges each event as it arrives, no bundles: the lowest latency per event, at several
         * times the operator's own CPU per event once the filter state is past the CPU's caches.
         */
        public Builder noBundles() {
            draft.noBundles();
            return this;
        }

        /** One fixed filter per key. */
        public Builder fixed() {
            draft.sizing.fixed();
            return this;
        }

        /**
         * A scalable cascade per key ({@link FilterSizing.Builder#scalable}; the default: growth s
         * = 2, tightening r = {@value #DEFAULT_TIGHTENING}).
         */
        public Builder scalable(int growthFactor, double tightening) {
            draft.sizing.scalable(growthFactor, tightening);
            return this;
        }

        /**
         * The rate budget's share of the first stage, which holds the expected items ({@link
         * FilterSizing.Builder#firstStageShare}; default {@value #DEFAULT_FIRST_STAGE_SHARE}).
         */
        public Builder firstStageShare(double firstStageShare) {
            draft.sizing.firstStageShare(firstStageShare);
            return this;
        }

        /**
         * Remember ids for {@code retention} on the given clock: an id seen again after that passes
         * again, and the state of expired generations is freed.
         */
        public Builder retention(Duration retention, TimeDomain timeDomain) {
            draft.retention(retention, timeDomain);
            return this;
        }

        /**
         * Filter generations under retention, 2 to 46 (default 2): an id is remembered for at least
         * the retention R and at most R G / (G - 1), so more make the retention finer-grained and
         * cost lookups in more generations. With allowed lateness A, (G - 1)(1 + A/R) + 2 must stay
         * at most {@link Retention#MAX_ON_TIME_GENERATIONS}.
         */
        public Builder generations(int generations) {
            draft.generations(generations);
            return this;
        }

        /**
         * How far behind the watermark an event-time event may be and still be judged: an event
         * with timestamp t is late when t + allowedLateness &lt;= the current watermark, and then
         * goes to the late side output ({@link BloomDedup#lateTag}) unjudged. Zero or more, in
         * whole milliseconds (default 0, Flink's convention for windows); state is kept that much
         * longer. Applies under a retention on event time, and under {@link FirstBy#EVENT_TIME}
         * without retention; otherwise it is unused.
         */
        public Builder allowedLateness(Duration allowedLateness) {
            draft.allowedLateness(allowedLateness);
            return this;
        }

        /** Virtual keys of global mode, 1 to 2^20 (default 1024). */
        public Builder shards(int shards) {
            draft.shards(shards);
            return this;
        }

        /** Send duplicates to the side output {@link BloomDedup#duplicatesTag} too. */
        public Builder emitDuplicates(boolean emitDuplicates) {
            draft.emitDuplicates = emitDuplicates;
            return this;
        }

        /**
         * A duplicate within the retention refreshes its id: it is added to the generation of its
         * own time too, so the id is remembered for the retention after its last occurrence, not
         * its first (Flink's {@code reset_ttl_on_duplicate}). Costs one insert per such duplicate.
         * Needs a retention (checked by {@link #build}). Default false.
         */
        public Builder resetRetentionOnDuplicate(boolean reset) {
            draft.resetRetentionOnDuplicate = reset;
            return this;
        }

        /**
         * Exact mode: every id added to the filter is also kept, itself, in keyed state beside the
         * generation whose filter holds it. Only the filter's "maybe" (a duplicate, or a false
         * positive at the configured fpp) reads the kept ids, and only an id found there is
         * dropped. The promise becomes exact dedup: a first occurrence always passes, a duplicate
         * within the retention (or, without one, ever) never does. State then grows with the
         * distinct ids (see docs/dedup.md for bytes per id); with a retention, a generation's ids
         * are dropped with it. A restore may switch it on (ids added before then have no exact
         * entry, so a duplicate of one may pass once more) or off (the entries stay until their
         * generation expires, read again if it is switched back on); both are logged. Default
         * false.
         */
        public Builder exact(boolean exact) {
            draft.exact = exact;
            return this;
        }

        /**
         * Which occurrence of an id passes (default {@link FirstBy#ARRIVAL}: the first to arrive,
         * at once); {@link FirstBy#EVENT_TIME}: the one with the smallest event time, when the
         * watermark reaches it, as that constant states. Needs a retention on {@link
         * TimeDomain#EVENT_TIME} or none, checked by {@link #build}. A restore may switch it either
         * way: events that were waiting are still judged at their timers.
         */
        public Builder firstBy(FirstBy firstBy) {
            draft.firstBy(firstBy);
            return this;
        }

        /**
         * Builds the config, checking that a key's filter can be sized.
         *
         * @throws IllegalArgumentException if the filter would exceed what one key can hold, or
         *     {@link FirstBy#EVENT_TIME} is set with a retention on processing time
         */
        public DedupConfig build() {
            DedupConfig config = new DedupConfig(draft);
            // global mode's smallest filter; per-key use checks expectedItems as it is added
            config.checkFits(Shards.itemsPerShard(config.expectedItems(), config.shards()), true);
            return config;
        }
    }
}
