package io.bloomstream.jobs.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupConfig;
import org.junit.jupiter.api.Test;

/** Tests for the arithmetic of {@link FilterHealth}, on given figures. */
class FilterHealthFiguresTest {

    @Test
    void suggestionsRoundUpToTwoSignificantDigits() {
        assertThat(FilterHealth.roundUp(11_784)).isEqualTo(12_000);
        assertThat(FilterHealth.roundUp(12_000)).isEqualTo(12_000);
        assertThat(FilterHealth.roundUp(1_001)).isEqualTo(1_100);
        assertThat(FilterHealth.roundUp(99)).isEqualTo(99);
        assertThat(FilterHealth.roundUp(0)).isEqualTo(1);
    }

    private static LocalMetrics.DedupFigures figures(int stages, long pages, long passed) {
        LocalMetrics.DedupFigures f = new LocalMetrics.DedupFigures("bloom-dedup");
        f.stages = stages;
        f.pages = pages;
        f.passed = passed;
        f.worstFill = 0.5;
        f.worstFpp = 0.001;
        return f;
    }

    @Test
    void aKeyWithThreeStagesOfTenHeldUpToSeventyIds() {
        DedupConfig config = DedupConfig.builder().expectedItems(10).fpp(0.01).build();
        FilterHealth h = FilterHealth.dedup(figures(3, 7, 500), config, false, "URLs");
        // stages of 10, 20 and 40 ids: more than 30, at most 70
        assertThat(h.suggestedExpectedItems).isEqualTo(70);
        assertThat(h.warning).contains("between 31 and 70 URLs").contains("--expected-items 70");
    }

    @Test
    void oneStagePerKeyOrAGlobalFilterWithinItsTotalIsHealthy() {
        DedupConfig config = DedupConfig.builder().expectedItems(1_000_000).fpp(0.01).build();
        assertThat(FilterHealth.dedup(figures(1, 10, 500), config, false, "ids").warning).isNull();
        // global: a shard may grow a stage by chance; the total is what counts
        FilterHealth global = FilterHealth.dedup(figures(2, 10, 999_999), config, true, "ids");
        assertThat(global.warning).isNull();
        assertThat(global.suggestedExpectedItems).isEqualTo(-1);
    }

    @Test
    void stateIsPagesTimesTheStagePageSize() {
        // 10^7 / 1024 shards = 9,766 ids per shard, first stage at 0.9%: 2048-bit state pages of
        // 256 bytes (at 10^6 the shards' first stages are small classic pages)
        DedupConfig config = DedupConfig.builder().expectedItems(10_000_000).fpp(0.01).build();
        FilterHealth h = FilterHealth.dedup(figures(1, 5_792, 11_784), config, true, "ids");
        assertThat(config.stageSpec(9_766, 0).pageBits()).isEqualTo(2048);
        assertThat(h.stateBytes).isEqualTo(5_792L * 256);
        assertThat(h.stateNote).isEqualTo("5,792 pages of 256 bytes");
    }

    @Test
    void exactModeAddsItsEntriesToTheStateAndSaysWhatTheyAre() {
        DedupConfig config = DedupConfig.builder().expectedItems(10).fpp(0.01).exact(true).build();
        LocalMetrics.DedupFigures f = figures(1, 4, 10);
        f.exactEntries = 10;
        f.exactBytes = 1_020;
        f.exactReads = 7;
        f.falsePositivesCaught = 2;
        FilterHealth h = FilterHealth.dedup(f, config, false, "URLs");
        long pages = h.stateBytes;
        assertThat(h.totalStateBytes()).isEqualTo(pages + 1_020);
        assertThat(h.line())
                .contains(", exact entries 1020.00 B (10 URLs, about 102 bytes each, estimated)")
                .endsWith(
                        "; 7 reads of the exact entries (2 of them false positives of the"
                                + " filters, each a first occurrence kept)");
        FilterHealth plain =
                FilterHealth.dedup(
                        f,
                        DedupConfig.builder().expectedItems(10).fpp(0.01).build(),
                        false,
                        "URLs");
        assertThat(plain.exact).isNull();
        assertThat(plain.totalStateBytes()).isEqualTo(plain.stateBytes);
        assertThat(plain.line()).doesNotContain("exact");
    }
}
