package io.bloomstream.flink.dedup;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.Retention;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.Shards;
import java.time.Duration;
import java.util.Objects;

/**
 * The values a {@link DedupConfig.Builder} has collected, with its defaults: each setter checks its
 * argument as it is set, and {@link #checkedRetention} checks them together when the config is
 * built. The public builder holds one and delegates to it, so that {@link DedupConfig} keeps the
 * documented API and this class the bookkeeping.
 */
final class DedupDraft {

    final FilterSizing.Builder sizing =
            FilterSizing.builder()
                    .scalable(ScalableBloomFilter.DEFAULT_GROWTH, DedupConfig.DEFAULT_TIGHTENING)
                    .firstStageShare(DedupConfig.DEFAULT_FIRST_STAGE_SHARE);
    long cacheBytes = DedupConfig.AUTO_CACHE_BYTES;
    int bundleSize = DedupConfig.DEFAULT_BUNDLE_SIZE;
    Duration bundleDelay = DedupConfig.DEFAULT_BUNDLE_DELAY;
    Duration retention;
    TimeDomain timeDomain = TimeDomain.EVENT_TIME;
    int generations = Retention.DEFAULT_GENERATIONS;
    Duration allowedLateness = Duration.ZERO;
    int shards = DedupConfig.DEFAULT_SHARDS;
    boolean emitDuplicates;
    boolean resetRetentionOnDuplicate;
    boolean exact;
    HashStrategy hashStrategy = DedupConfig.DEFAULT_HASH_STRATEGY;
    FirstBy firstBy = FirstBy.ARRIVAL;

    void hashStrategy(HashStrategy hashStrategy) {
        Objects.requireNonNull(hashStrategy, "hashStrategy");
        if (hashStrategy.isKeyed()) {
            throw new IllegalArgumentException(
                    "hashStrategy must be XXH3_64 or XXH3_128, was " + hashStrategy);
        }
        this.hashStrategy = hashStrategy;
    }

    void cacheBytes(long cacheBytes) {
        if (cacheBytes < 0) {
            throw new IllegalArgumentException("cacheBytes must be >= 0, got " + cacheBytes);
        }
        this.cacheBytes = cacheBytes;
    }

    void bundle(int maxEvents, Duration maxDelay) {
        if (maxEvents < 2 || maxEvents > DedupConfig.MAX_BUNDLE_SIZE) {
            throw new IllegalArgumentException(
                    "maxEvents must be in [2, "
                            + DedupConfig.MAX_BUNDLE_SIZE
                            + "], got "
                            + maxEvents);
        }
        if (maxDelay == null || maxDelay.isNegative() || maxDelay.isZero()) {
            throw new IllegalArgumentException("maxDelay must be positive, got " + maxDelay);
        }
        this.bundleSize = maxEvents;
        this.bundleDelay = maxDelay;
    }

    void noBundles() {
        this.bundleSize = 0;
        this.bundleDelay = Duration.ZERO;
    }

    void retention(Duration retention, TimeDomain timeDomain) {
        Retention.builder(retention, timeDomain); // checks both
        this.retention = retention;
        this.timeDomain = timeDomain;
    }

    void generations(int generations) {
        Retention.builder(Duration.ofDays(1), TimeDomain.EVENT_TIME).generations(generations);
        this.generations = generations;
    }

    void allowedLateness(Duration allowedLateness) {
        Retention.builder(Duration.ofDays(1), TimeDomain.EVENT_TIME)
                .allowedLateness(allowedLateness);
        this.allowedLateness = allowedLateness;
    }

    void shards(int shards) {
        this.shards = Shards.check(shards);
    }

    void firstBy(FirstBy firstBy) {
        this.firstBy = Objects.requireNonNull(firstBy, "firstBy");
    }

    /**
     * The retention (null: none), after the checks that tie the values together.
     *
     * @throws IllegalArgumentException if {@code resetRetentionOnDuplicate} is set without a
     *     retention, or {@link FirstBy#EVENT_TIME} with a retention on processing time
     */
    Retention checkedRetention() {
        Retention r =
                retention == null
                        ? null
                        : Retention.builder(retention, timeDomain)
                                .generations(generations)
                                .allowedLateness(allowedLateness)
                                .build();
        if (resetRetentionOnDuplicate && r == null) {
            throw new IllegalArgumentException(
                    "resetRetentionOnDuplicate needs a retention (none was set)");
        }
        if (firstBy == FirstBy.EVENT_TIME && r != null && timeDomain != TimeDomain.EVENT_TIME) {
            throw new IllegalArgumentException(
                    "firstBy EVENT_TIME needs event time: a retention on EVENT_TIME or none,"
                            + " was a retention of "
                            + retention
                            + " on "
                            + timeDomain);
        }
        return r;
    }

    /**
     * Checks that a filter of {@code config} for {@code itemsPerKey} ids can be made: in global
     * mode a shard's share, otherwise one key's expected items.
     *
     * @throws IllegalArgumentException naming the share or the key, the items of the first stage of
     *     one generation and that stage's rate
     */
    static void checkFits(DedupConfig config, long itemsPerKey, boolean global) {
        String what =
                global
                        ? Shards.describe(config.expectedItems(), config.shards(), "global mode")
                        : "one key (expectedItems " + itemsPerKey + ")";
        try {
            config.sizing()
                    .checkFits(
                            config.generationItems(itemsPerKey),
                            config.fpp() / config.generations(),
                            what);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; config " + config, e.getCause());
        }
    }

    /** The text of {@link DedupConfig#toString()}: its values, the defaults of a few left out. */
    static String describe(DedupConfig c) {
        return "DedupConfig{"
                + c.sizing()
                + ", retention="
                + (c.hasRetention() ? c.retentionPolicy() : "forever")
                + ", shards="
                + c.shards()
                + ", emitDuplicates="
                + c.emitDuplicates()
                + (c.resetRetentionOnDuplicate() ? ", resetRetentionOnDuplicate=true" : "")
                + (c.exact() ? ", exact=true" : "")
                + (c.firstBy() == FirstBy.ARRIVAL ? "" : ", firstBy=" + c.firstBy())
                + (c.firstBy() == FirstBy.EVENT_TIME && !c.hasRetention()
                        ? ", allowedLateness=" + c.allowedLateness()
                        : "")
                + ", cacheBytes="
                + c.cacheBytes()
                + ", hash="
                + c.hashStrategy()
                + (c.bundleSize() == 0 ? "" : ", bundle=" + c.bundleSize() + "/" + c.bundleDelay())
                + "}";
    }
}
