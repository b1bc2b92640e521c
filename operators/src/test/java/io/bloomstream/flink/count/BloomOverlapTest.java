package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.KeyedEvents;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link BloomOverlap}: set estimates against exact answers. */
public class BloomOverlapTest {

    private static final int SIZE = 20_000;
    public static final OutputTag<String> REJECTED_A = BloomOverlap.rejectedTagA(Types.STRING);
    public static final OutputTag<String> REJECTED_B = BloomOverlap.rejectedTagB(Types.STRING);

    public static CountConfig config(FilterSizing filter) {
        return builder(filter).build();
    }

    public static CountConfig.Builder builder(FilterSizing filter) {
        return CountConfig.builder()
                .filter(filter)
                .timeDomain(TimeDomain.EVENT_TIME)
                .interval(Duration.ofHours(1));
    }

    @ParameterizedTest(name = "overlap={0}%")
    @ValueSource(ints = {0, 10, 50, 100})
    void unionAndIntersectionMatchExactAnswersWithinTheirStatedError(int percent) throws Exception {
        CountConfig config =
                config(FilterSizing.builder().expectedItems(2L * SIZE).fpp(0.01).fixed().build());
        BloomOverlap.checkShape(config);
        try (var h = harness(config)) {
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

    private static KeyedTwoInputStreamOperatorTestHarness<String, String, String, OverlapEstimate>
            harness(CountConfig config) throws Exception {
        var fn =
                new BloomOverlap.OverlapFunction<String, String, String>(
                        KeyedEvents.idSelector(),
                        KeyedEvents.idSelector(),
                        config,
                        REJECTED_A,
                        REJECTED_B);
        return new KeyedTwoInputStreamOperatorTestHarness<>(
                new KeyedCoProcessOperator<>(fn), KeyedEvents::key, KeyedEvents::key, Types.STRING);
    }

    private static CountConfig sized(long expectedItems) {
        return config(
                FilterSizing.builder().expectedItems(expectedItems).fpp(0.01).fixed().build());
    }

    @Test
    void aSideMadeAfterARestoreWithAnotherSizeTakesTheOtherSidesShape() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness(sized(2_000))) {
            h.open();
            for (int i = 0; i < 1_000; i++) {
                h.processElement1("site," + i, 1); // A: [0, 1000) in the 2,000-item shape
            }
            snapshot = h.snapshot(1, 1);
        }
        try (var h = harness(sized(50_000))) {
            h.initializeState(snapshot);
            h.open();
            for (int i = 500; i < 1_500; i++) {
                h.processElement2("site," + i, 2); // B: [500, 1500) in the new, larger shape
            }
            h.processBothWatermarks(new Watermark(Long.MAX_VALUE));
            List<OverlapEstimate> out = h.extractOutputValues();
            OverlapEstimate e = out.get(out.size() - 1);
            assertThat(e.isFinal).isTrue();
            // B's filter took A's recorded shape, so the two are ORed: |A u B| = 1500, and
            // |A n B| = 500, each within three stated standard errors. (Before, B took the new
            // config's shape and the ORed pages of different lengths gave |A| = 744 and a "valid"
            // intersection of 0.)
            assertThat(Math.abs(e.a - 1_000)).as("%s", e).isLessThanOrEqualTo(3 * e.aError);
            assertThat(Math.abs(e.b - 1_000)).as("%s", e).isLessThanOrEqualTo(3 * e.bError);
            assertThat(e.valid).as("%s", e).isTrue();
            assertThat(Math.abs(e.union - 1_500)).isLessThanOrEqualTo(3 * e.unionError);
            assertThat(Math.abs(e.intersection - 500)).isLessThanOrEqualTo(3 * e.intersectionError);
        }
    }

    @Test
    void eventsWithoutIdOrTimestampGoToTheRejectedOutputOfTheirSide() throws Exception {
        try (var h = harness(sized(1_000))) {
            h.open();
            h.processElement1("site,", 5); // empty id
            h.processElement1(new StreamRecord<>("site,a-without-time")); // event time: needed
            h.processElement1(new StreamRecord<>("site,a-at-min", Long.MIN_VALUE)); // none either
            h.processElement1("site,a", 5);
            h.processElement2("site,", 5);
            h.processElement2(new StreamRecord<>("site,b-without-time"));
            h.processElement2("site,b", 5);
            h.processBothWatermarks(new Watermark(Long.MAX_VALUE));
            assertThat(h.getSideOutput(REJECTED_A))
                    .extracting(StreamRecord::getValue)
                    .containsExactly("site,", "site,a-without-time", "site,a-at-min");
            assertThat(h.getSideOutput(REJECTED_B))
                    .extracting(StreamRecord::getValue)
                    .containsExactly("site,", "site,b-without-time");
            List<OverlapEstimate> out = h.extractOutputValues();
            OverlapEstimate e = out.get(out.size() - 1);
            // Only "a" and "b" are counted.
            assertThat(e.a).isCloseTo(1.0, within(0.01));
            assertThat(e.b).isCloseTo(1.0, within(0.01));
            assertThat(e.union).isCloseTo(2.0, within(0.01));
            assertThat(out)
                    .extracting(r -> r.timestamp)
                    .containsExactly(3_600_000L, Long.MAX_VALUE);
        }
    }

    @Test
    void growingCascadesAreRefusedWhenTheJobIsBuilt() {
        assertThatThrownBy(() -> BloomOverlap.checkShape(config(FilterSizing.builder().build())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Growth.FIXED");
    }
}
