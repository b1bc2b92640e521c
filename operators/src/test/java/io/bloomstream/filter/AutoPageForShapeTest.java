package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Tests for {@link Sizing#autoPageBits(long, int, long)}: the page of an explicit shape. */
class AutoPageForShapeTest {

    private static final long ITEMS = 100_000;
    private static final long BITS = 20 * ITEMS; // m/n = 20
    private static final int HASHES = 10;

    @Test
    void picksTheSmallestPageWithinFivePercentOfTheClassicRate() {
        double classic = Sizing.falsePositiveRate(BITS, HASHES, ITEMS);
        int page = Sizing.autoPageBits(BITS, HASHES, ITEMS);
        assertThat(page).isEqualTo(8192);
        // m rounded up to whole pages, as FilterSpec does: 245 pages of 8192 bits
        assertThat(Sizing.pagedFalsePositiveRate(roundUp(BITS, page), HASHES, ITEMS, page))
                .isLessThanOrEqualTo(1.05 * classic);
        // the next smaller page misses it, and 512 bits (the old choice) is far off: 2.3x
        assertThat(Sizing.pagedFalsePositiveRate(roundUp(BITS, page / 2), HASHES, ITEMS, page / 2))
                .isGreaterThan(1.05 * classic);
        assertThat(Sizing.pagedFalsePositiveRate(BITS, HASHES, ITEMS, 512) / classic)
                .isBetween(2.0, 2.6);
    }

    private static long roundUp(long bits, int page) {
        return (bits + page - 1) / page * page;
    }

    @Test
    void theChosenLayoutMeasuresNearTheClassicRateAndFiveTwelveBitPagesDoNot() {
        // 4,000,000 probes of items never added. Classic rate r = (1 - e^(-0.5))^10 = 8.9e-5:
        // 356 expected false positives, sd 19. The chosen page may have up to 1.05 r (374): a
        // count above 374 + 4.5 sd (459) is a failure with probability < 1e-5. 512-bit pages
        // (model 2.3 r, 820 expected, sd 29) must measure above 1.6 r + 4.5 sd (700).
        long probes = 4_000_000;
        double classic = Sizing.falsePositiveRate(BITS, HASHES, ITEMS);
        int page = Sizing.autoPageBits(BITS, HASHES, ITEMS);
        assertThat(falsePositives(page, probes))
                .isLessThanOrEqualTo(
                        (long) (1.05 * classic * probes + 4.5 * Math.sqrt(classic * probes)));
        assertThat(falsePositives(512, probes))
                .isGreaterThan((long) (1.6 * classic * probes + 4.5 * Math.sqrt(classic * probes)));
    }

    private static long falsePositives(int page, long probes) {
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder().bits(BITS).hashes(HASHES).pageBits(page).build());
        for (long i = 0; i < ITEMS; i++) {
            f.add("member-" + i);
        }
        long hits = 0;
        for (long i = 0; i < probes; i++) {
            if (f.mightContain("probe-" + i)) {
                hits++;
            }
        }
        return hits;
    }

    @Test
    void aFilterNoLargerThanAPageIsClassic() {
        assertThat(Sizing.autoPageBits(512, 7, 50)).isEqualTo(FilterSpec.CLASSIC);
        assertThat(Sizing.autoPageBits(100, 3, 10)).isEqualTo(FilterSpec.CLASSIC);
        // 8191 bits: pages of 512 would be the only candidate above m/16; they are too costly
        assertThat(Sizing.autoPageBits(8191, 10, 400)).isEqualTo(FilterSpec.CLASSIC);
    }

    @Test
    void aFilterSizedTheClassicWayKeepsItsUsualPage() {
        // m, k of a classic 1% filter for 10^6 items: the chosen page keeps the rate within 5%.
        long[] mk = Sizing.sizeClassic(1_000_000, 0.01);
        int page = Sizing.autoPageBits(mk[0], (int) mk[1], 1_000_000);
        assertThat(page).isGreaterThanOrEqualTo(512);
        assertThat(
                        Sizing.pagedFalsePositiveRate(
                                mk[0] / page * page + (mk[0] % page == 0 ? 0 : page),
                                (int) mk[1],
                                1_000_000,
                                page))
                .isLessThanOrEqualTo(
                        1.05 * Sizing.falsePositiveRate(mk[0], (int) mk[1], 1_000_000));
    }

    @Test
    void badArgumentsNameTheArgument() {
        assertThatThrownBy(() -> Sizing.autoPageBits(0, 3, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bits");
        assertThatThrownBy(() -> Sizing.autoPageBits(1000, 0, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hashes");
        assertThatThrownBy(() -> Sizing.autoPageBits(1000, 3, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expectedItems");
    }
}
