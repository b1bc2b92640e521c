package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link BloomOverlap}: set estimates against exact answers. */
class BloomOverlapTest {

    private static final int SIZE = 20_000;

    static CountConfig config(DedupConfig filter) {
        return CountConfig.builder()
                .filter(filter)
                .timeDomain(DedupConfig.TimeDomain.EVENT_TIME)
                .interval(Duration.ofHours(1))
                .build();
    }

    @ParameterizedTest(name = "overlap={0}%")
    @ValueSource(ints = {0, 10, 50, 100})
    void unionAndIntersectionMatchExactAnswersWithinTheirStatedError(int percent) throws Exception {
        CountConfig config =
                config(DedupConfig.builder().expectedItems(2L * SIZE).fpp(0.01).fixed().build());
        BloomOverlap.checkShape(config);
        var fn =
                new BloomOverlap.OverlapFunction<String, String, String>(
                        DedupHarness.idSelector(), DedupHarness.idSelector(), config);
        try (var h =
                new KeyedTwoInputStreamOperatorTestHarness<>(
                        new KeyedCoProcessOperator<>(fn),
                        DedupHarness::key,
                        DedupHarness::key,
                        Types.STRING)) {
            h.open();
            // A = [0, SIZE), B = [SIZE - overlap, 2 SIZE - overlap): |A ∩ B| = overlap.
            int overlap = SIZE * percent / 100;
            for (int i = 0; i < SIZE; i++) {
                h.processElement1("site," + i, 1);
                h.processElement2("site," + (SIZE - overlap + i), 1);
            }
            h.processBothWatermarks(new Watermark(Long.MAX_VALUE));
            List<OverlapEstimate> out = h.extractOutputValues();
            OverlapEstimate e = out.get(out.size() - 1);
            assertThat(e.isFinal).isTrue();
            assertThat(e.valid).isTrue();
            // Bounds: three of each stated standard error (the intersection's adds the three
            // variances, which overstates it: the estimates are positively correlated).
            assertThat(Math.abs(e.a - SIZE)).isLessThanOrEqualTo(3 * e.aError);
            assertThat(Math.abs(e.b - SIZE)).isLessThanOrEqualTo(3 * e.bError);
            assertThat(Math.abs(e.union - (2.0 * SIZE - overlap)))
                    .isLessThanOrEqualTo(3 * e.unionError);
            assertThat(Math.abs(e.intersection - overlap))
                    .as("%s", e)
                    .isLessThanOrEqualTo(3 * e.intersectionError);
        }
    }

    @Test
    void growingCascadesAreRefusedWhenTheJobIsBuilt() {
        assertThatThrownBy(() -> BloomOverlap.checkShape(config(DedupConfig.builder().build())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Growth.FIXED");
    }
}
