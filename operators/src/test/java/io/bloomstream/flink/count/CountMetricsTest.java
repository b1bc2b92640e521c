package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import io.bloomstream.testing.KeyedEvents;
import java.nio.file.Path;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for the metrics of the count operator ({@link CountFunction}), read back by name from the
 * operator's metric group: each moves in a first run and again in the run after a restore.
 */
class CountMetricsTest {

    @TempDir Path tmp;

    static KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> count(
            CountConfig config, Backend backend, HarnessMetrics metrics) throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(
                                new CountFunction<String, String>(
                                        KeyedEvents.idSelector(),
                                        config,
                                        config.filter().expectedItems(),
                                        CountFunctionTest.REJECTED)),
                        KeyedEvents::key,
                        Types.STRING,
                        metrics.environment());
        h.setStateBackend(backend.create());
        return h;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void countRejectedMovesInEveryRun(Backend backend) throws Exception {
        CountConfig config =
                CountFunctionTest.eventTime(100).window(java.time.Duration.ofMillis(100)).build();
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = count(config, backend, m)) {
            h.open();
            assertThat(m.count(CountFunction.REJECTED)).isZero();
            h.processElement("a,1", 10);
            h.processElement("a,", 10); // no id
            h.processElement(new StreamRecord<>("a,2")); // no timestamp
            h.processWatermark(new Watermark(150));
            h.processElement("a,3", 50); // its window has closed
            assertThat(m.count(CountFunction.REJECTED)).isEqualTo(3);
            h.processElement("a,4", 160);
            snapshot = h.snapshot(1, 1);
        }
        try (HarnessMetrics after = new HarnessMetrics();
                var h = count(config, backend, after)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(after.count(CountFunction.REJECTED)).as("a new run").isZero();
            h.processElement("a,", 170);
            assertThat(after.count(CountFunction.REJECTED)).isEqualTo(1);
        }
    }

    /** A screen operator in a harness whose metrics are read back; commands go to input 2. */
}
