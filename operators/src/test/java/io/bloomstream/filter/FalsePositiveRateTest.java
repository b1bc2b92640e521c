package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Measured false-positive rates against the layout's model, over at least 10^6 negative probes.
 * Members are the longs [0, n) and probes [2^40, 2^40 + probes): disjoint, so every positive probe
 * is a false positive. The count must lie within {@link Binomial#Z} sigma of probes times the
 * model's rate.
 */
class FalsePositiveRateTest {

    private static final long PROBE_BASE = 1L << 40;

    static Stream<Arguments> targets() {
        return Stream.of(
                Arguments.of(0.01, FilterSpec.CLASSIC, 100_000, 1_000_000),
                Arguments.of(0.01, FilterSpec.DEFAULT_PAGE_BITS, 100_000, 1_000_000),
                Arguments.of(0.01, 64, 100_000, 1_000_000),
                Arguments.of(0.001, FilterSpec.CLASSIC, 100_000, 2_000_000),
                Arguments.of(0.001, FilterSpec.DEFAULT_PAGE_BITS, 100_000, 2_000_000),
                Arguments.of(0.0001, FilterSpec.CLASSIC, 50_000, 4_000_000),
                Arguments.of(0.0001, FilterSpec.DEFAULT_PAGE_BITS, 50_000, 4_000_000),
                Arguments.of(0.0001, 2048, 50_000, 4_000_000));
    }

    @ParameterizedTest(name = "p={0} pageBits={1}")
    @MethodSource("targets")
    void measuredRateMatchesTheModelAndTheTarget(double fpp, int pageBits, int n, int probes) {
        FilterSpec spec =
                FilterSpec.builder()
                        .expectedItems(n)
                        .fpp(fpp)
                        .pageBits(pageBits)
                        .hasher(Hasher.xxh3(1234))
                        .build();
        double model = spec.expectedFpp(n);
        assertThat(model).isLessThanOrEqualTo(fpp * 1.0001); // classic k rounding aside
        long falsePositives = measure(spec, n, probes);
        assertThat(Binomial.within(falsePositives, probes, model))
                .as(
                        "%d false positives in %d probes, model %.3e (+-%.0f)",
                        falsePositives, probes, model, Binomial.halfWidth(probes, model))
                .isTrue();
        assertThat(Binomial.atMost(falsePositives, probes, fpp)).isTrue();
    }

    @ParameterizedTest(name = "pageBits={0}")
    @MethodSource("tablePointLayouts")
    void classicTablePointTwentyBitsTenHashes(int pageBits) {
        // m/n = 20, k = 10: classic theory (1 - e^-0.5)^10 = 8.89e-5.
        int n = 100_000;
        FilterSpec spec =
                FilterSpec.builder()
                        .bits(20L * n)
                        .hashes(10)
                        .pageBits(pageBits)
                        .hasher(Hasher.xxh3(99))
                        .build();
        double model = spec.expectedFpp(n);
        if (pageBits == FilterSpec.CLASSIC) {
            assertThat(model).isCloseTo(8.89e-5, org.assertj.core.api.Assertions.within(5e-8));
        }
        int probes = 4_000_000;
        long falsePositives = measure(spec, n, probes);
        assertThat(Binomial.within(falsePositives, probes, model))
                .as("%d false positives, model %.3e", falsePositives, model)
                .isTrue();
    }

    static Stream<Integer> tablePointLayouts() {
        return Stream.of(FilterSpec.CLASSIC, FilterSpec.DEFAULT_PAGE_BITS);
    }

    static Stream<Arguments> singleHashTargets() {
        return Stream.of(
                Arguments.of(0.01, FilterSpec.DEFAULT_PAGE_BITS, 100_000, 4_000_000),
                Arguments.of(0.001, FilterSpec.DEFAULT_PAGE_BITS, 100_000, 4_000_000),
                Arguments.of(0.0001, FilterSpec.DEFAULT_PAGE_BITS, 50_000, 8_000_000),
                Arguments.of(0.01, 64, 100_000, 4_000_000),
                Arguments.of(0.001, FilterSpec.CLASSIC, 100_000, 4_000_000));
    }

    /**
     * The layout for one 64-bit hash (page and positions re-mixed from it, {@link
     * FilterSpec#positions64}) against the layout's model ({@link Binomial#Z} sigma), and against
     * the 128-bit layout at the same m, k and page size: at most 1.05x its measured rate. Bound: a
     * count with e expected false positives has a relative standard deviation of 1 / sqrt(e), so
     * the ratio of two independent counts has sqrt(2 / e): 0.7% at p = 1% here (e = 40,000), 5% at
     * p = 0.01% (e = 800). Where Z of those deviations exceed the 5% margin the bound widens by the
     * excess, so a failure means the re-mixed positions are worse than the model, not bad luck (and
     * the seeds are fixed, so a run is repeatable).
     */
    @ParameterizedTest(name = "p={0} pageBits={1}")
    @MethodSource("singleHashTargets")
    void singleHashLayoutMatchesTheModelAndTheTwoHashLayout(
            double fpp, int pageBits, int n, int probes) {
        FilterSpec single =
                FilterSpec.builder()
                        .expectedItems(n)
                        .fpp(fpp)
                        .pageBits(pageBits)
                        .hasher(Hasher.xxh3_64(1234))
                        .build();
        FilterSpec twoHash =
                FilterSpec.of(single.bits(), single.hashes(), pageBits, Hasher.xxh3(1234));
        double model = single.expectedFpp(n);
        long singleCount = measure(single, n, probes);
        long twoHashCount = measure(twoHash, n, probes);
        assertThat(Binomial.within(singleCount, probes, model))
                .as(
                        "%d false positives in %d probes, model %.3e (+-%.0f)",
                        singleCount, probes, model, Binomial.halfWidth(probes, model))
                .isTrue();
        double expected = probes * model;
        double ratioSigma = Math.sqrt(2 / expected);
        double bound = 1.05 * (1 + Math.max(0, Binomial.Z * ratioSigma - 0.05));
        assertThat((double) singleCount / twoHashCount)
                .as("single-hash %d vs two-hash %d false positives", singleCount, twoHashCount)
                .isLessThanOrEqualTo(bound);
    }

    static Stream<Arguments> currentFppLayouts() {
        return Stream.of(
                Arguments.of(0.001, 1024, Hasher.xxh3(1234)),
                Arguments.of(0.001, FilterSpec.DEFAULT_PAGE_BITS, Hasher.xxh3_64(1234)),
                Arguments.of(0.01, 64, Hasher.xxh3(1234)),
                Arguments.of(0.001, FilterSpec.CLASSIC, Hasher.xxh3(1234)));
    }

    /**
     * The rate a filter reports from its bits ({@link BloomFilter#currentFpp()}, what {@code
     * inspect} and the screen show) against the measured rate, within {@link Binomial#Z} sigma: in
     * paged layouts the fill ratio to the power k is about 30% too low at 0.1% (pages hold unequal
     * loads), so the rate must come from each page's own fill (issue 29, item 6).
     */
    @ParameterizedTest(name = "p={0} pageBits={1}")
    @MethodSource("currentFppLayouts")
    void currentFppFromTheBitsMatchesTheMeasuredRate(double fpp, int pageBits, Hasher hasher) {
        int n = 100_000;
        int probes = 2_000_000;
        FilterSpec spec =
                FilterSpec.builder()
                        .expectedItems(n)
                        .fpp(fpp)
                        .pageBits(pageBits)
                        .hasher(hasher)
                        .build();
        BloomFilter filter = BloomFilter.create(spec);
        for (long i = 0; i < n; i++) {
            filter.add(i);
        }
        long falsePositives = 0;
        for (long i = 0; i < probes; i++) {
            if (filter.mightContain(PROBE_BASE + i)) {
                falsePositives++;
            }
        }
        double current = filter.currentFpp();
        assertThat(Binomial.within(falsePositives, probes, current))
                .as(
                        "%d false positives in %d probes, current fpp %.3e (+-%.0f), model %.3e",
                        falsePositives,
                        probes,
                        current,
                        Binomial.halfWidth(probes, current),
                        spec.expectedFpp(n))
                .isTrue();
    }

    private static long measure(FilterSpec spec, int n, int probes) {
        BloomFilter filter = BloomFilter.create(spec);
        for (long i = 0; i < n; i++) {
            filter.add(i);
        }
        long falsePositives = 0;
        for (long i = 0; i < probes; i++) {
            if (filter.mightContain(PROBE_BASE + i)) {
                falsePositives++;
            }
        }
        return falsePositives;
    }
}
