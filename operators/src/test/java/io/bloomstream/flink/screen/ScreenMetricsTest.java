package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.testing.HarnessMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the metrics of the screen operator ({@link ScreenMetrics}), read back by name from the
 * operator's metric group: each moves in a first run and again in the run after a restore, and the
 * gauges show the restored state.
 */
class ScreenMetricsTest {

    @TempDir Path tmp;

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
        ((CoBroadcastWithNonKeyedOperator<String, FilterUpdate, String>) h.getOperator())
                .processElement1(new StreamRecord<>(event, 1));
    }

    @SuppressWarnings("unchecked")
    static void command(AbstractStreamOperatorTestHarness<String> h, FilterUpdate command)
            throws Exception {
        ((CoBroadcastWithNonKeyedOperator<String, FilterUpdate, String>) h.getOperator())
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
            command(h, FilterUpdate.add("new@spam.example").withSequence(1));
            command(h, FilterUpdate.remove("spammer@bad.example").withSequence(2));
            command(h, FilterUpdate.add("unnumbered@spam.example")); // not numbered
            command(h, FilterUpdate.load("nosuchscheme:///spam-v3.bloom", 3).withSequence(3));
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
            command(h, FilterUpdate.load(v2.toUri().toString(), 2).withSequence(4));
            assertThat(after.gauge(ScreenMetrics.FILTER_VERSION)).isEqualTo(2L);
            assertThat(after.gauge(ScreenMetrics.FILTER_BYTES)).isEqualTo(Files.size(v2));
            assertThat(after.number(ScreenMetrics.EXPECTED_FPP))
                    .as("three entries instead of one")
                    .isGreaterThan(v1Fpp);
            assertThat(after.gauge(ScreenMetrics.OVERLAY_ENTRIES)).as("cleared").isEqualTo(0);
            assertThat(after.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(4L);
            command(h, FilterUpdate.load(v1.toUri().toString(), 1).withSequence(5)); // stale
            command(h, FilterUpdate.load("nosuchscheme:///spam-v5.bloom", 5).withSequence(6));
            assertThat(after.count(ScreenMetrics.COMMAND_ERRORS)).isEqualTo(1);
            assertThat(after.count(ScreenMetrics.LOAD_ERRORS)).isEqualTo(1);
            assertThat(after.gauge(ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(6L);
        }
    }
}
