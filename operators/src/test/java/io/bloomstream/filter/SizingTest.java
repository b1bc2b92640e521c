package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link Sizing}. */
class SizingTest {

    @Test
    void classicSizingMatchesTextbookFigures() {
        // At p = 1%: 9.585 bits and 7 hashes per item; at 0.1%: 14.378 bits and 10 hashes
        // (Broder and Mitzenmacher 2004, table 1 and eq. 1).
        long m = Sizing.optimalBits(1_000_000, 0.01);
        assertThat(Sizing.bitsPerItem(m, 1_000_000)).isCloseTo(9.585, within(0.001));
        assertThat(Sizing.optimalHashes(1_000_000, m)).isEqualTo(7);
        long m2 = Sizing.optimalBits(1_000_000, 0.001);
        assertThat(Sizing.bitsPerItem(m2, 1_000_000)).isCloseTo(14.378, within(0.001));
        assertThat(Sizing.optimalHashes(1_000_000, m2)).isEqualTo(10);
    }

    @Test
    void classicRateMatchesTablePoint() {
        // m/n = 20, k = 10: (1 - e^-0.5)^10 = 8.89e-5 (Fan et al. 2000, table 1).
        assertThat(Sizing.falsePositiveRate(20_000, 10, 1_000)).isCloseTo(8.89e-5, within(5e-8));
    }

    @Test
    void billionItemsAtOneInTenThousandNeedAtLeast1point66GB() {
        double floorBytes = Sizing.lowerBoundBitsPerItem(1e-4) * 1e9 / 8;
        assertThat(floorBytes / 1e9).isCloseTo(1.66, within(0.005));
        assertThat(Sizing.bytes(Sizing.optimalBits(1_000_000_000L, 1e-4)))
                .isGreaterThan((long) floorBytes);
    }

    @Test
    void rejectsBadParametersNamingThem() {
        assertThatThrownBy(() -> Sizing.optimalBits(0, 0.01))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expectedItems")
                .hasMessageContaining("0");
        assertThatThrownBy(() -> Sizing.optimalBits(10, 1.0))
                .hasMessageContaining("fpp must be in (0, 1), was 1.0");
        assertThatThrownBy(() -> Sizing.optimalBits(10, Double.NaN)).hasMessageContaining("fpp");
        assertThatThrownBy(() -> Sizing.optimalBits(Long.MAX_VALUE / 2, 1e-9))
                .hasMessageContaining("more than");
        assertThatThrownBy(() -> Sizing.falsePositiveRate(100, 0, 1))
                .hasMessageContaining("hashes must be in [1, 64], was 0");
        assertThatThrownBy(() -> FilterSpec.of(1000, 3, 500, Hasher.defaultHasher()))
                .hasMessageContaining("pageBits")
                .hasMessageContaining("500");
        assertThatThrownBy(() -> FilterSpec.of(1000, 3, 512, Hasher.defaultHasher()))
                .hasMessageContaining("multiple of pageBits=512, was 1000");
        assertThatThrownBy(() -> FilterSpec.builder().expectedItems(10).build())
                .hasMessageContaining("expectedItems and fpp go together");
        assertThatThrownBy(
                        () ->
                                FilterSpec.builder()
                                        .expectedItems(10)
                                        .fpp(0.1)
                                        .bits(100)
                                        .hashes(3)
                                        .build())
                .hasMessageContaining("either");
    }

    @Test
    void pagedModelConvergesToClassicForLargePages() {
        long n = 100_000;
        long m = 1L << 20;
        double classic = Sizing.falsePositiveRate(m, 7, n);
        double paged = Sizing.pagedFalsePositiveRate(m, 7, n, 1 << 16);
        assertThat(paged / classic).isBetween(1.0, 1.01);
    }

    @Test
    void pagedPenaltyShrinksWithPageSizeAndDefaultStaysUnderFivePercentAtOnePercent() {
        long n = 1_000_000;
        double classic = Sizing.optimalBits(n, 0.01);
        double previous = Double.MAX_VALUE;
        for (int page = 64; page <= 8192; page *= 2) {
            double penalty = Sizing.sizePaged(n, 0.01, page)[0] / classic;
            assertThat(penalty).as("penalty at %d bits", page).isLessThan(previous);
            previous = penalty;
        }
        double defaultPenalty =
                Sizing.sizePaged(n, 0.01, FilterSpec.DEFAULT_PAGE_BITS)[0] / classic;
        assertThat(defaultPenalty).isBetween(1.0, 1.05);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.05, 0.01, 0.001, 0.0001})
    void pagedSizingReachesTheRequestedRateUnderItsModel(double fpp) {
        for (int page : new int[] {64, 512, 4096}) {
            FilterSpec spec =
                    FilterSpec.builder().expectedItems(50_000).fpp(fpp).pageBits(page).build();
            assertThat(spec.expectedFpp(50_000)).isLessThanOrEqualTo(fpp);
            // and it is the smallest such size: one page fewer misses the target at that k
            double fewer =
                    Sizing.pagedFalsePositiveRate(spec.bits() - page, spec.hashes(), 50_000, page);
            assertThat(fewer).isGreaterThan(fpp);
        }
    }

    @Test
    void sizingNearTheIndexLimitTerminates() {
        // 1.14e11 items at 1%: k = 7 fits under MAX_BITS, its neighbour k = 8 does not. Sizing
        // must skip k = 8 rather than search for ever.
        long[] mk = Sizing.sizeClassic(114_000_000_000L, 0.01);
        assertThat(mk[0]).isLessThanOrEqualTo(Sizing.MAX_BITS);
        assertThat(Sizing.falsePositiveRate(mk[0], (int) mk[1], 114_000_000_000L))
                .isLessThanOrEqualTo(0.01);
        assertThatThrownBy(() -> Sizing.sizeClassic(120_000_000_000L, 0.01))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void bytesRoundUp() {
        assertThat(Sizing.bytes(1)).isEqualTo(1);
        assertThat(Sizing.bytes(8)).isEqualTo(1);
        assertThat(Sizing.bytes(9)).isEqualTo(2);
    }

    @Test
    void theRateOfAnAbsurdLoadCostsNoWalkOverTheLoads() {
        // A filter file may say anything in itemsAdded: 2^59 items over 2^31 pages of 64 bits
        // (found by fuzzing) walked ~10^5 loads of the binomial, 2 s and 8 MB a call, and the
        // screen's metrics ask for the rate on every report.
        long pages = Integer.MAX_VALUE;
        Sizing.pagedFalsePositiveRate(64 * pages, 1, 1L << 59, 64); // loads the model's classes
        io.bloomstream.testing.Allocations.Measured m =
                io.bloomstream.testing.Allocations.measure(
                        () ->
                                assertThat(
                                                Sizing.pagedFalsePositiveRate(
                                                        64 * pages, 1, 1L << 59, 64))
                                        .isEqualTo(1.0));
        assertThat(m.thrown()).isNull();
        assertThat(m.bytes()).isLessThan(64 * 1024);
        // Below that load the walk is unchanged: a sane load agrees with the classic formula.
        assertThat(Sizing.pagedFalsePositiveRate(64 * pages, 1, 1L << 30, 64))
                .isCloseTo(-Math.expm1(-(double) (1L << 30) / (64 * pages)), within(1e-5));
    }
}
