package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.DedupHarness.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for the metrics of the count ({@link BloomCountFunction}) and screen ({@link
 * ScreenMetrics}) operators, read back by name from the operator's metric group: each moves in a
 * first run and again in the run after a restore, and the screen's gauges show the restored state.
 */
class CountScreenMetricsTest {

    @TempDir Path tmp;

    static KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> count(
            CountConfig config, Backend backend, HarnessMetrics metrics) throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(
                                new BloomCountFunction<String, String>(
                                        DedupHarness.idSelector(),
                                        config,
                                        config.filter().expectedItems(),
                                        BloomCountFunctionTest.REJECTED)),
                        DedupHarness::key,
                        Types.STRING,
                        metrics.environment());
        h.setStateBackend(backend.create());
        return h;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void countRejectedMovesInEveryRun(Backend backend) throws Exception {
        CountConfig config =
                BloomCountFunctionTest.eventTime(100)
                        .window(java.time.Duration.ofMillis(100))
                        .build();
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = count(config, backend, m)) {
            h.open();
            assertThat(m.count(BloomCountFunction.REJECTED)).isZero();
            h.processElement("a,1", 10);
            h.processElement("a,", 10); // no id
            h.processElement(new StreamRecord<>("a,2")); // no timestamp
            h.processWatermark(new Watermark(150));
            h.processElement("a,3", 50); // its window has closed
            assertThat(m.count(BloomCountFunction.REJECTED)).isEqualTo(3);
            h.processElement("a,4", 160);
            snapshot = h.snapshot(1, 1);
        }
        try (HarnessMetrics after = new HarnessMetrics();
                var h = count(config, backend, after)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(after.count(BloomCountFunction.REJECTED)).as("a new run").isZero();
            h.processElement("a,", 170);
            assertThat(after.count(BloomCountFunction.REJECTED)).isEqualTo(1);
        }
    }

    /** A screen operator in a harness whose metrics are read back; commands go to input 2. */
    static AbstractStreamOperatorTestHarness<String> screen(
            ScreenConfig<String> config, HarnessMetrics metrics, OperatorSubtaskState state)
            throws Exception {
        var h =
                new AbstractStreamOperatorTestHarness<String>(
                        new CoBroadcastWithNonKeyedOperator<>(
                                new ScreenFunction<>(
                                        config,
                                        ScreenFunctionTest.FLAGGED,
                                        ScreenFunctionTest.REJECTED),
                                List.of(ScreenFunction.OVERLAY_STATE, ScreenFunction.FILTER_STATE)),
                        metrics.environment());
        h.setup();
        if (state == null) {
            h.initializeEmptyState();
        } else {
            h.initializeState(state);
        }
        h.open();
        return h;
    }

    @SuppressWarnings("unchecked")
    static void event(AbstractStreamOperatorTestHarness<String> h, String event) throws Exception {
        ((CoBroadcastWithNonKeyedOperator<String, ScreenCommand, String>) h.getOperator())
                .processElement1(new StreamRecord<>(event, 1));
    }

    @SuppressWarnings("unchecked")
    static void command(AbstractStreamOperatorTestHarness<String> h, ScreenCommand command)
            throws Exception {
        ((CoBroadcastWithNonKeyedOperator<String, ScreenCommand, String>) h.getOperator())
                .processElement2(new StreamRecord<>(command, 1));
    }

    @Test
    void everyScreenMetricMovesAndTheGaugesShowTheRestoredState() throws Exception {
        Path v1 = tmp.resolve("spam-v1.bloom");
        Path v2 = tmp.resolve("spam-v2.bloom");
        ScreenFunctionTest.writeFilter(
                v1, Normalization.EMAIL, Hasher.defaultHasher(), "spammer@bad.example");
        ScreenFunctionTest.writeFilter(
                v2,
                Normalization.EMAIL,
                Hasher.defaultHasher(),
                "other@spam.example",
                "more@spam.example",
                "most@spam.example");
        ScreenConfig<String> config = ScreenFunctionTest.config(v1.toUri().toString());
        OperatorSubtaskState snapshot;
        double v1Fpp;
        try (HarnessMetrics m = new HarnessMetrics(1, 1, 0);
                var h = screen(config, m, null)) {
            assertThat(m.gauge(ScreenMetrics.FILTER_VERSION)).isEqualTo(1L);
            assertThat(m.gauge(ScreenMetrics.FILTER_BYTES)).isEqualTo(Files.size(v1));
            assertThat(m.number(ScreenMetrics.EXPECTED_FPP)).isPositive().isLessThan(0.001);
            v1Fpp = m.number(ScreenMetrics.EXPECTED_FPP);
            assertThat(m.gauge(ScreenMetrics.OVERLAY_ENTRIES)).isEqualTo(0);
            assertThat(m.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(0L);
            event(h, "spammer@bad.example,a@good.example");
            event(h, "x@good.example,a@good.example");
            event(h, ",a@good.example"); // from missing
            assertThat(m.count(ScreenMetrics.SCREENED)).isEqualTo(3);
            assertThat(m.count(ScreenMetrics.FLAGGED)).isEqualTo(1);
            assertThat(m.count(ScreenMetrics.REJECTED)).isEqualTo(1);
            command(h, ScreenCommand.add("new@spam.example").withSequence(1));
            command(h, ScreenCommand.remove("spammer@bad.example").withSequence(2));
            command(h, ScreenCommand.add("unnumbered@spam.example")); // not numbered
            command(h, ScreenCommand.load("nosuchscheme:///spam-v3.bloom", 3).withSequence(3));
            assertThat(m.gauge(ScreenMetrics.OVERLAY_ENTRIES)).isEqualTo(2);
            assertThat(m.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(3L);
            assertThat(m.count(ScreenMetrics.COMMAND_ERRORS)).isEqualTo(1);
            assertThat(m.count(ScreenMetrics.LOAD_ERRORS)).isEqualTo(1);
            assertThat(m.gauge(ScreenMetrics.FILTER_VERSION)).as("the old one stays").isEqualTo(1L);
            snapshot = h.snapshot(1, 1);
        }

        try (HarnessMetrics after = new HarnessMetrics(1, 1, 0);
                var h = screen(config, after, snapshot)) {
            assertThat(after.count(ScreenMetrics.SCREENED)).as("a new run").isZero();
            assertThat(after.gauge(ScreenMetrics.OVERLAY_ENTRIES)).isEqualTo(2);
            assertThat(after.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(3L);
            assertThat(after.gauge(ScreenMetrics.FILTER_VERSION)).isEqualTo(1L);
            event(h, "new@spam.example,a@good.example");
            event(h, "a@good.example,");
            assertThat(after.count(ScreenMetrics.SCREENED)).isEqualTo(2);
            assertThat(after.count(ScreenMetrics.FLAGGED)).isEqualTo(1);
            assertThat(after.count(ScreenMetrics.REJECTED)).isEqualTo(1);
            command(h, ScreenCommand.load(v2.toUri().toString(), 2).withSequence(4));
            assertThat(after.gauge(ScreenMetrics.FILTER_VERSION)).isEqualTo(2L);
            assertThat(after.gauge(ScreenMetrics.FILTER_BYTES)).isEqualTo(Files.size(v2));
            assertThat(after.number(ScreenMetrics.EXPECTED_FPP))
                    .as("three entries instead of one")
                    .isGreaterThan(v1Fpp);
            assertThat(after.gauge(ScreenMetrics.OVERLAY_ENTRIES)).as("cleared").isEqualTo(0);
            assertThat(after.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(4L);
            command(h, ScreenCommand.load(v1.toUri().toString(), 1).withSequence(5)); // stale
            command(h, ScreenCommand.load("nosuchscheme:///spam-v5.bloom", 5).withSequence(6));
            assertThat(after.count(ScreenMetrics.COMMAND_ERRORS)).isEqualTo(1);
            assertThat(after.count(ScreenMetrics.LOAD_ERRORS)).isEqualTo(1);
            assertThat(after.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(6L);
        }
    }
}
