package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.StageShapes;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.testing.HarnessMetrics;
import io.bloomstream.testing.KeyedEvents;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Tests for the metrics of {@link BloomOverlap}, read back by name from the operator's metric
 * group, in a first run and in the run after a restore.
 */
class OverlapMetricsTest {

    /**
     * A keyed two-input harness (keys are the part before the comma) on the environment of {@code
     * metrics}: Flink's {@code KeyedTwoInputStreamOperatorTestHarness} takes no environment.
     */
    static final class Harness extends AbstractStreamOperatorTestHarness<OverlapEstimate> {
        private final KeyedCoProcessOperator<String, String, String, OverlapEstimate> op;

        Harness(HarnessMetrics metrics) throws Exception {
            this(
                    new KeyedCoProcessOperator<>(
                            new BloomOverlap.OverlapFunction<String, String, String>(
                                    KeyedEvents.idSelector(),
                                    KeyedEvents.idSelector(),
                                    // sides written before 0.2 were hashed with XXH3-128
                                    BloomOverlapTest.builder(filter(2000))
                                            .hashStrategy(HashStrategy.XXH3_128)
                                            .build(),
                                    BloomOverlapTest.REJECTED_A,
                                    BloomOverlapTest.REJECTED_B)),
                    metrics);
        }

        private Harness(
                KeyedCoProcessOperator<String, String, String, OverlapEstimate> op,
                HarnessMetrics metrics)
                throws Exception {
            super(op, metrics.environment());
            this.op = op;
            KeySelector<String, String> key = KeyedEvents::key;
            config.setStatePartitioner(0, key);
            config.setStatePartitioner(1, key);
            config.setStateKeySerializer(StringSerializer.INSTANCE);
            config.serializeAllConfigs();
        }

        void a(String event, long time) throws Exception {
            StreamRecord<String> r = new StreamRecord<>(event, time);
            op.setKeyContextElement1(r);
            op.processElement1(r);
        }

        void watermark(long time) throws Exception {
            op.processWatermark1(new Watermark(time));
            op.processWatermark2(new Watermark(time));
        }

        /** Writes key {@code key}'s metadata of side {@code side} directly into keyed state. */
        void writeMeta(String key, String side, FilterMeta meta) throws Exception {
            KeyedStateBackend<String> backend =
                    ((AbstractStreamOperator<?>) op).getKeyedStateBackend();
            backend.setCurrentKey(key);
            ValueState<FilterMeta> state =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            new ValueStateDescriptor<>(
                                    "bloom-overlap-meta-" + side, FilterMetaSerializer.INSTANCE));
            state.update(meta);
        }
    }

    static FilterSizing filter(long expectedItems) {
        return FilterSizing.builder().expectedItems(expectedItems).fpp(0.01).fixed().build();
    }

    /** One open filter whose first stage has the shape of a fixed filter for {@code items}. */
    static FilterMeta sideOf(long items) {
        FilterSizing config = filter(items);
        FilterMeta meta = FilterMeta.empty(config.hasher(), 1);
        meta.buckets[0] = 0;
        meta.slots.get(0).add(new StageShapes(config, items, config.fpp()).newStage(0));
        return meta;
    }

    @Test
    void rejectedAndShapeMismatchMoveInEveryRun() throws Exception {
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = new Harness(m)) {
            h.open();
            h.a("site,", 1);
            assertThat(m.count(BloomOverlap.REJECTED)).isEqualTo(1);
            // Sides of different shapes, as state written before 0.2 may hold: never ORed.
            h.writeMeta("site", "a", sideOf(2000));
            h.writeMeta("site", "b", sideOf(100));
            h.a("site,1", 1);
            assertThat(m.count(BloomOverlap.SHAPE_MISMATCH)).isZero();
            snapshot = h.snapshot(1, 1);
            // The interval's record (the final record's timer is set when a side opens, and these
            // sides were written into state directly).
            h.watermark(Long.MAX_VALUE);
            assertThat(m.count(BloomOverlap.SHAPE_MISMATCH)).isEqualTo(1);
            assertThat(h.extractOutputValues())
                    .allSatisfy(e -> assertThat(Double.isNaN(e.intersection)).isTrue());
        }
        try (HarnessMetrics after = new HarnessMetrics();
                var h = new Harness(after)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(after.count(BloomOverlap.SHAPE_MISMATCH)).as("a new run").isZero();
            h.a("site,", 2);
            h.a("site,2", 2);
            h.watermark(Long.MAX_VALUE);
            assertThat(after.count(BloomOverlap.REJECTED)).isEqualTo(1);
            assertThat(after.count(BloomOverlap.SHAPE_MISMATCH)).isEqualTo(1);
        }
    }
}
