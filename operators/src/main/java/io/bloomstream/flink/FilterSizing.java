package io.bloomstream.flink;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.filter.Sizing;
import java.io.Serializable;
import org.apache.flink.annotation.PublicEvolving;

/**
 * What each key's filter is sized for and how it grows, shared by every keyed operator (dedup,
 * count, overlap) and the SQL functions: expected distinct items, the false-positive rate, the page
 * size, the hash seed and the growth past the expected items. Immutable and validated; build it
 * with {@link #builder()}.
 *
 * <p>Under {@link Growth#SCALABLE} growth a filter is a cascade (Almeida et al., "Scalable Bloom
 * Filters", 2007): stage i holds s^i times the items of stage 0. By default (Almeida's split) stage
 * i takes the rate p (1 - r) r^i of the cascade's budget p. With {@link Builder#firstStageShare}
 * the first stage, which holds the expected items, takes the share a of p and each later stage i >=
 * 1 takes p (1 - a) (1 - r) r^(i-1): Almeida's split is a = 1 - r. Either way the rates sum to at
 * most p, so the compound rate stays at or below p however many items arrive. {@link
 * io.bloomstream.flink.dedup.DedupConfig} spends most of the budget on the first stage (a = 0.9): a
 * stream that meets its expected items then costs about what a fixed filter costs.
 */
@PublicEvolving
public final class FilterSizing implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default expected distinct ids per key (per shard in global mode: total / shards). */
    public static final long DEFAULT_EXPECTED_ITEMS = 1_000_000;

    /** Default false-positive rate. */
    public static final double DEFAULT_FPP = 0.01;

    /**
     * The smallest page that the automatic page size picks for state: each page is one state entry
     * with about 20 bytes of overhead in a checkpoint, so at 1% 512-bit pages took 1.78 bytes of
     * state per distinct id and 2048-bit pages 1.50 (10^6 ids) and 1.355 (10^7). 4096-bit pages
     * take 1.30 and 1.27 but cost heap throughput (0.66x against 0.82x of pass-through in one run
     * at 10^6 ids): pass {@code pageBits(4096)} when state size matters more
     * (benchmarks/RESULTS.md).
     */
    public static final int MIN_AUTO_STATE_PAGE_BITS = 2048;

    /** How a key's filter grows past its expected items. */
    public enum Growth {
        /** One filter; past capacity its false-positive rate climbs (a warning is logged). */
        FIXED,
        /** A scalable cascade: the rate stays within the target however many items arrive. */
        SCALABLE
    }

    private final long expectedItems;
    private final double fpp;
    private final int pageBits;
    private final long seed;
    private final Growth growth;
    private final int growthFactor;
    private final double tightening;

    /** a, or NaN for Almeida's split (a = 1 - r, computed as p (1 - r) r^i). */
    private final double firstStageShare;

    private FilterSizing(Builder b) {
        this.expectedItems = b.expectedItems;
        this.fpp = b.fpp;
        this.pageBits = b.pageBits;
        this.seed = b.seed;
        this.growth = b.growth;
        this.growthFactor = b.growthFactor;
        this.tightening = b.tightening;
        this.firstStageShare = b.firstStageShare;
    }

    /** A builder with the defaults: 10^6 items at 1%, automatic pages, scalable growth. */
    public static Builder builder() {
        return new Builder();
    }

    /** Expected distinct ids per key (in global mode: in total). */
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

    /** How a key's filter grows past its expected items. */
    public Growth growth() {
        return growth;
    }

    /** s, the capacity ratio of consecutive cascade stages. */
    public int growthFactor() {
        return growthFactor;
    }

    /** r, the rate ratio of consecutive cascade stages after the first. */
    public double tightening() {
        return tightening;
    }

    /**
     * a, the share of the rate budget spent on the first cascade stage: 1 - r unless {@link
     * Builder#firstStageShare} set it.
     */
    public double firstStageShare() {
        return almeidaSplit() ? 1 - tightening : firstStageShare;
    }

    /**
     * Whether the split is Almeida's: no share set (NaN), or 0.0 from a {@code FilterSizing}
     * Java-serialized before the share existed (the builder refuses 0).
     */
    private boolean almeidaSplit() {
        return !(firstStageShare > 0);
    }

    /** The capacity of cascade stage {@code stage} of a filter sized for {@code items}. */
    public long stageCapacity(long items, int stage) {
        if (growth == Growth.FIXED) {
            return items;
        }
        return ScalableBloomFilter.stageCapacity(items, growthFactor, stage);
    }

    /**
     * The shape of cascade stage {@code stage} of a filter sized for {@code items} at the compound
     * rate {@code rate}, with this sizing's page size (automatic: {@link #statePageBits}) and
     * hasher. Its state holds the stage as pages of {@link FilterSpec#pageBits()} bits (a classic
     * stage as one page of all its bits).
     */
    public FilterSpec stageSpec(long items, double rate, int stage) {
        double p = stageRate(rate, stage);
        long capacity = stageCapacity(items, stage);
        int page = pageBits;
        if (pageBits == FilterSpec.AUTO_PAGE_BITS) {
            page = almeidaSplit() ? statePageBits(capacity, p) : cappedStatePageBits(capacity, p);
        }
        return FilterSpec.builder()
                .expectedItems(capacity)
                .fpp(p)
                .pageBits(page)
                .hasher(hasher())
                .build();
    }

    /**
     * The rate of cascade stage {@code stage} when the cascade's budget is {@code rate}: {@code
     * rate} for a fixed filter; for a cascade rate (1 - r) r^stage under Almeida's split, else rate
     * a for the first stage and rate (1 - a) (1 - r) r^(stage-1) for a later one. The stages' rates
     * sum to at most {@code rate}.
     */
    public double stageRate(double rate, int stage) {
        if (growth == Growth.FIXED) {
            return rate;
        }
        if (almeidaSplit()) {
            return ScalableBloomFilter.stageFpp(rate, tightening, stage);
        }
        return stage == 0
                ? rate * firstStageShare
                : ScalableBloomFilter.stageFpp(rate * (1 - firstStageShare), tightening, stage - 1);
    }

    /**
     * Checks that the first stage of a filter for {@code items} at the compound rate {@code rate}
     * can be made (the first stage of a cascade holds the filter's expected items).
     *
     * @param what the filter, for the message ("one key", "each of the 1024 shards")
     * @throws IllegalArgumentException naming the items and the stage's rate when it cannot
     */
    public void checkFits(long items, double rate, String what) {
        try {
            stageSpec(items, rate, 0);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException(
                    "cannot size a filter for "
                            + what
                            + ": its first cascade stage would hold "
                            + items
                            + " ids at a false-positive rate of "
                            + stageRate(rate, 0)
                            + " ("
                            + e.getMessage()
                            + "); lower expectedItems or raise fpp",
                    e);
        }
    }

    /**
     * The page size for a filter kept in keyed state, for {@code capacity} items at rate {@code p}:
     * the automatic page size of {@link Sizing#autoPageBits}, but at least {@link
     * #MIN_AUTO_STATE_PAGE_BITS}, and one classic page for filters of fewer than four such pages.
     * The one rule for state pages: the DataStream operators and the SQL functions use it.
     */
    public static int statePageBits(long capacity, double p) {
        int page = Sizing.autoPageBits(capacity, p);
        if (page != FilterSpec.CLASSIC && page < MIN_AUTO_STATE_PAGE_BITS) {
            page =
                    Sizing.sizeClassic(capacity, p)[0] > 4L * MIN_AUTO_STATE_PAGE_BITS
                            ? MIN_AUTO_STATE_PAGE_BITS
                            : FilterSpec.CLASSIC;
        }
        return page;
    }

    /**
     * {@link #statePageBits}, but never a page whose paged sizing needs more than {@link
     * Sizing#MAX_PAGE_PENALTY} times the classic bits: a stage of a few pages, where raising the
     * automatic page to {@link #MIN_AUTO_STATE_PAGE_BITS} can cost 16% more bits (1,103 items at
     * 0.9%: six 2048-bit pages, 11.1 bits per item against the classic 9.8), takes the next larger
     * page within the penalty, or one classic page. The page rule of the stages of a cascade with a
     * {@link Builder#firstStageShare} (dedup's default from 0.5); stages of Almeida's split keep
     * {@link #statePageBits}, so count and overlap make the shapes they made before.
     */
    public static int cappedStatePageBits(long capacity, double p) {
        int page = statePageBits(capacity, p);
        if (page == FilterSpec.CLASSIC) {
            return page;
        }
        double classic = Sizing.sizeClassic(capacity, p)[0];
        for (; page <= FilterSpec.MAX_PAGE_BITS && page < classic; page *= 2) {
            try {
                if (Sizing.sizePaged(capacity, p, page)[0] <= Sizing.MAX_PAGE_PENALTY * classic) {
                    return page;
                }
            } catch (IllegalArgumentException tooLarge) {
                // this page size cannot reach the rate within Sizing.MAX_BITS: try a larger one
            }
        }
        return FilterSpec.CLASSIC;
    }

    @Override
    public String toString() {
        return "expectedItems="
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
                        ? "(s="
                                + growthFactor
                                + ", r="
                                + tightening
                                + ", a="
                                + (almeidaSplit() ? "1-r" : firstStageShare)
                                + ")"
                        : "");
    }

    /** Builds a {@link FilterSizing}; each setter checks its argument. */
    @PublicEvolving
    public static final class Builder {
        private long expectedItems = DEFAULT_EXPECTED_ITEMS;
        private double fpp = DEFAULT_FPP;
        private int pageBits = FilterSpec.AUTO_PAGE_BITS;
        private long seed = Hasher.DEFAULT_SEED;
        private Growth growth = Growth.SCALABLE;
        private int growthFactor = ScalableBloomFilter.DEFAULT_GROWTH;
        private double tightening = ScalableBloomFilter.DEFAULT_TIGHTENING;
        private double firstStageShare = Double.NaN;

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
         * FilterSpec#AUTO_PAGE_BITS} (default: {@link FilterSizing#statePageBits}).
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

        /** One fixed filter per key. */
        public Builder fixed() {
            this.growth = Growth.FIXED;
            return this;
        }

        /**
         * A scalable cascade per key (the default), with growth s and tightening r of the stages
         * after the first; the first stage's share is {@link #firstStageShare}.
         */
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
         * The share a of the rate budget spent on a cascade's first stage, in (0, 1); the later
         * stages share the rest, stage i >= 1 at p (1 - a) (1 - r) r^(i-1). Without it the split is
         * Almeida's, a = 1 - r (stage i at p (1 - r) r^i). It applies to stages made from now on:
         * restored state keeps the stages it recorded. No effect on a fixed filter.
         */
        public Builder firstStageShare(double firstStageShare) {
            if (!(firstStageShare > 0 && firstStageShare < 1)) {
                throw new IllegalArgumentException(
                        "firstStageShare must be in (0, 1), was " + firstStageShare);
            }
            this.firstStageShare = firstStageShare;
            return this;
        }

        /**
         * Builds the sizing. Whether a filter of it fits is checked where the operator knows how
         * many items one filter holds (a key's expected items, or a shard's share of a global
         * total).
         */
        public FilterSizing build() {
            return new FilterSizing(this);
        }
    }
}
