package io.bloomstream.filter;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom filters",
 * 2007): a cascade of {@link BloomFilter} stages for a stream of unknown length. Stage i is sized
 * for {@code initialCapacity * s^i} items at rate {@code p (1 - r) r^i}; a new stage opens when the
 * current one has taken its capacity. A query is the OR of the stages, so the compound rate is at
 * most the sum of the stage rates, p (1 - r) (1 + r + r^2 + ...) = p, however long the stream.
 *
 * <p>The defaults, s = {@value #DEFAULT_GROWTH} and r = {@value #DEFAULT_TIGHTENING}, were chosen
 * by measuring memory against a right-sized filter (see {@code benchmarks/RESULTS.md});
 * RedisBloom's s = 2, r = 0.5 costs 2.4x at 1e9 items from an initial 1e6, these 1.7x. Not
 * thread-safe.
 */
public final class ScalableBloomFilter implements MembershipFilter {

    /** Default growth factor s. */
    public static final int DEFAULT_GROWTH = 2;

    /** Default tightening ratio r. */
    public static final double DEFAULT_TIGHTENING = 0.9;

    /** Stages beyond this count are refused (the filter would be astronomically large). */
    public static final int MAX_STAGES = 64;

    private final long initialCapacity;
    private final double fpp;
    private final int growth;
    private final double tightening;
    private final int pageBits;
    private final Hasher hasher;
    private final List<BloomFilter> stages;

    private ScalableBloomFilter(
            long initialCapacity,
            double fpp,
            int growth,
            double tightening,
            int pageBits,
            Hasher hasher,
            List<BloomFilter> stages) {
        this.initialCapacity = initialCapacity;
        this.fpp = fpp;
        this.growth = growth;
        this.tightening = tightening;
        this.pageBits = pageBits;
        this.hasher = hasher;
        this.stages = stages;
    }

    /** A cascade with the default growth, tightening, page size and hasher. */
    public static ScalableBloomFilter create(long initialCapacity, double fpp) {
        return create(
                initialCapacity,
                fpp,
                DEFAULT_GROWTH,
                DEFAULT_TIGHTENING,
                FilterSpec.AUTO_PAGE_BITS,
                Hasher.defaultHasher());
    }

    /**
     * A cascade.
     *
     * @param initialCapacity items of the first stage, >= 1
     * @param fpp the compound false-positive rate it must stay under, in (0, 1)
     * @param growth s, the capacity ratio of consecutive stages, in [2, 16]
     * @param tightening r, the rate ratio of consecutive stages, in (0, 1)
     * @param pageBits page size of every stage, {@link FilterSpec#CLASSIC}, or {@link
     *     FilterSpec#AUTO_PAGE_BITS} to let each stage choose for its own rate
     * @param hasher the hasher of every stage
     */
    public static ScalableBloomFilter create(
            long initialCapacity,
            double fpp,
            int growth,
            double tightening,
            int pageBits,
            Hasher hasher) {
        checkParameters(initialCapacity, fpp, growth, tightening, pageBits);
        return new ScalableBloomFilter(
                initialCapacity,
                fpp,
                growth,
                tightening,
                pageBits,
                Objects.requireNonNull(hasher, "hasher"),
                new ArrayList<>());
    }

    static ScalableBloomFilter restore(
            long initialCapacity,
            double fpp,
            int growth,
            double tightening,
            int pageBits,
            Hasher hasher,
            List<BloomFilter> stages) {
        checkParameters(initialCapacity, fpp, growth, tightening, pageBits);
        ScalableBloomFilter f =
                new ScalableBloomFilter(
                        initialCapacity, fpp, growth, tightening, pageBits, hasher, stages);
        for (int i = 0; i < stages.size(); i++) {
            stages.get(i).spec().checkCompatible(f.stageSpec(i));
        }
        return f;
    }

    private static void checkParameters(
            long initialCapacity, double fpp, int growth, double tightening, int pageBits) {
        Sizing.checkItems(initialCapacity);
        Sizing.checkFpp(fpp);
        if (growth < 2 || growth > 16) {
            throw new IllegalArgumentException("growth must be in [2, 16], was " + growth);
        }
        if (!(tightening > 0 && tightening < 1)) {
            throw new IllegalArgumentException("tightening must be in (0, 1), was " + tightening);
        }
        if (pageBits != FilterSpec.CLASSIC && pageBits != FilterSpec.AUTO_PAGE_BITS) {
            FilterSpec.checkPageBits(pageBits);
        }
    }

    /** The capacity of stage i: initialCapacity * s^i. */
    public long stageCapacity(int stage) {
        return stageCapacity(initialCapacity, growth, stage);
    }

    /** The target rate of stage i: p (1 - r) r^i. */
    public double stageFpp(int stage) {
        return stageFpp(fpp, tightening, stage);
    }

    /**
     * The capacity of stage i of a cascade, n0 s^i (the schedule of Almeida et al.).
     *
     * @throws IllegalStateException if it exceeds what a filter can hold
     */
    public static long stageCapacity(long initialCapacity, int growth, int stage) {
        double c = initialCapacity * Math.pow(growth, stage);
        if (c > Sizing.MAX_BITS) {
            throw new IllegalStateException("stage " + stage + " would hold " + c + " items");
        }
        return (long) c;
    }

    /** The target rate of stage i of a cascade, p (1 - r) r^i: the rates sum to p. */
    public static double stageFpp(double fpp, double tightening, int stage) {
        return fpp * (1 - tightening) * Math.pow(tightening, stage);
    }

    FilterSpec stageSpec(int stage) {
        return FilterSpec.builder()
                .expectedItems(stageCapacity(stage))
                .fpp(stageFpp(stage))
                .pageBits(pageBits)
                .hasher(hasher)
                .build();
    }

    @Override
    public Hasher hasher() {
        return hasher;
    }

    @Override
    public void add(long h1, long h2) {
        currentStage().add(h1, h2);
    }

    @Override
    public boolean mightContain(long h1, long h2) {
        for (int i = stages.size() - 1; i >= 0; i--) {
            if (stages.get(i).mightContain(h1, h2)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean addIfAbsent(long h1, long h2) {
        if (mightContain(h1, h2)) {
            return false;
        }
        return currentStage().addIfAbsent(h1, h2);
    }

    private BloomFilter currentStage() {
        int n = stages.size();
        if (n == 0 || stages.get(n - 1).itemsAdded() >= stageCapacity(n - 1)) {
            if (n >= MAX_STAGES) {
                throw new IllegalStateException("cascade reached " + MAX_STAGES + " stages");
            }
            stages.add(BloomFilter.create(stageSpec(n)));
        }
        return stages.get(stages.size() - 1);
    }

    /** The stages, oldest first (read-only view). */
    public List<BloomFilter> stages() {
        return Collections.unmodifiableList(stages);
    }

    /** Items taken as new, over all stages. */
    @Override
    public long itemsAdded() {
        long total = 0;
        for (BloomFilter s : stages) {
            total += s.itemsAdded();
        }
        return total;
    }

    /** Total bits over all stages. */
    public long bits() {
        long total = 0;
        for (BloomFilter s : stages) {
            total += s.spec().bits();
        }
        return total;
    }

    /** Heap bytes held by all stages now. */
    public long allocatedBytes() {
        long total = 0;
        for (BloomFilter s : stages) {
            total += s.allocatedBytes();
        }
        return total;
    }

    /**
     * The compound theoretical rate now: 1 - prod(1 - stage rate at its current items), at most the
     * sum of the stage targets, hence at most p.
     */
    @Override
    public double expectedFpp() {
        double pass = 1;
        for (BloomFilter s : stages) {
            pass *= 1 - s.expectedFpp();
        }
        return 1 - pass;
    }

    /** The sum of the stage estimates. */
    @Override
    public Estimate estimate() {
        List<Estimate> parts = new ArrayList<>(stages.size());
        for (BloomFilter s : stages) {
            parts.add(s.estimate());
        }
        return Estimate.sum(parts);
    }

    public long initialCapacity() {
        return initialCapacity;
    }

    public double fpp() {
        return fpp;
    }

    public int growth() {
        return growth;
    }

    public double tightening() {
        return tightening;
    }

    public int pageBits() {
        return pageBits;
    }

    @Override
    public String toString() {
        return "ScalableBloomFilter{initialCapacity="
                + initialCapacity
                + ", fpp="
                + fpp
                + ", growth="
                + growth
                + ", tightening="
                + tightening
                + ", stages="
                + stages.size()
                + ", itemsAdded="
                + itemsAdded()
                + "}";
    }
}
