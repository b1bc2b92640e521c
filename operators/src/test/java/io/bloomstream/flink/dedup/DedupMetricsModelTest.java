package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Sizing;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link DedupMetrics#ESTIMATED_FPP}: the rate of the fullest stage comes from the
 * stage's layout, paged or classic, as {@code expectedFpp} computes it, not from the classic
 * formula for every layout (issue 29, item 6).
 */
class DedupMetricsModelTest {

    private static Map<String, Gauge<?>> gauges(DedupMetrics[] out) {
        Map<String, Gauge<?>> gauges = new HashMap<>();
        out[0] =
                new DedupMetrics(
                        new UnregisteredMetricsGroup() {
                            @Override
                            public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
                                gauges.put(name, gauge);
                                return gauge;
                            }
                        });
        return gauges;
    }

    @Test
    void estimatedFppOfAPagedStageIsThePagedModel() {
        DedupMetrics[] m = new DedupMetrics[1];
        Map<String, Gauge<?>> g = gauges(m);
        long bits = 1_498_112;
        m[0].observe(99_990, bits, 10, 1024, 1);
        double paged = Sizing.pagedFalsePositiveRate(bits, 10, 99_990, 1024);
        assertThat((Double) g.get(DedupMetrics.ESTIMATED_FPP).getValue())
                .isCloseTo(paged, within(paged * 1e-9));
        assertThat(paged).isGreaterThan(1.3 * Sizing.falsePositiveRate(bits, 10, 99_990));

        m[0].observe(99_990, bits, 10, FilterSpec.CLASSIC, 1);
        assertThat((Double) g.get(DedupMetrics.ESTIMATED_FPP).getValue())
                .isCloseTo(
                        Sizing.falsePositiveRate(bits, 10, 99_990),
                        within(Sizing.falsePositiveRate(bits, 10, 99_990) * 1e-9));
    }
}
