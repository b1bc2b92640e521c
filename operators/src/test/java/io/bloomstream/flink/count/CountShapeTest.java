package io.bloomstream.flink.count;

import static io.bloomstream.testing.GoldenSnapshots.file;
import static io.bloomstream.testing.GoldenSnapshots.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link CountShape}: the count state records its window, and a restore with another
 * window (or windowed against running) fails for good naming both values. The committed snapshots
 * {@code count-shape-1-BACKEND.snapshot} (shape record version 1: event time, 1 s windows, 5 keys)
 * lock the record's format; they are written by {@link #writeSnapshots} with {@code
 * -Dbloomstream.writeSnapshots=true} when missing (a committed file is never rewritten).
 */
class CountShapeTest {

    private static final String GOLDEN = "count-shape";

    static CountConfig windowed(long millis) {
        return CountFunctionTest.eventTime(1000).window(Duration.ofMillis(millis)).build();
    }

    static CountConfig running() {
        return CountFunctionTest.eventTime(1000).build();
    }

    private static OperatorSubtaskState snapshotOf(CountConfig config, Backend backend)
            throws Exception {
        try (var h = CountFunctionTest.harness(config, backend)) {
            h.open();
            for (int i = 0; i < 50; i++) {
                h.processElement("k" + (i % 5) + "," + i, 3_600_000L + i);
            }
            return h.snapshot(1, 1);
        }
    }

    private static void assertRefused(
            OperatorSubtaskState state, CountConfig config, Backend backend, String... named)
            throws Exception {
        try (var h = CountFunctionTest.harness(config, backend)) {
            assertThatThrownBy(() -> h.initializeState(state))
                    .isInstanceOf(SuppressRestartsException.class)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("field window was " + named[0] + " in the savepoint")
                    .hasMessageContaining("is " + named[1] + " in the job's config");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void refusesAnotherWindowLengthNamingBoth(Backend backend) throws Exception {
        OperatorSubtaskState hourly = snapshotOf(windowed(3_600_000), backend);
        assertRefused(hourly, windowed(60_000), backend, "3600000 ms", "60000 ms");
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void refusesRunningAgainstWindowedBothWays(Backend backend) throws Exception {
        assertRefused(
                snapshotOf(windowed(1000), backend),
                running(),
                backend,
                "1000 ms",
                "running counts (no window)");
        assertRefused(
                snapshotOf(running(), backend),
                windowed(1000),
                backend,
                "running counts (no window)",
                "1000 ms");
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresWithTheSameWindow(Backend backend) throws Exception {
        OperatorSubtaskState state = snapshotOf(windowed(60_000), backend);
        try (var h = CountFunctionTest.harness(windowed(60_000), backend)) {
            h.initializeState(state);
            h.open();
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            List<CountEstimate> out = h.extractOutputValues();
            assertThat(out).hasSize(5);
            for (CountEstimate e : out) {
                assertThat(e.windowStart).isEqualTo(3_600_000L);
                assertThat(e.isFinal).isTrue();
            }
        }
    }

    /** The committed snapshots of shape record version 1: restored with and without a change. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void version1SnapshotsRestoreAndRefuseAnotherWindow(Backend backend) throws Exception {
        OperatorSubtaskState state = read(GOLDEN, "1", backend);
        try (var h = CountFunctionTest.harness(windowed(1000), backend)) {
            h.initializeState(state);
            h.open();
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            List<CountEstimate> out = h.extractOutputValues();
            assertThat(out).hasSize(5);
            for (CountEstimate e : out) {
                assertThat(e.windowStart).isEqualTo(3_600_000L);
                // 10 distinct ids per key; 3 stated standard errors.
                assertThat(Math.abs(e.estimate - 10)).isLessThanOrEqualTo(3 * e.standardError + 1);
            }
        }
        assertRefused(read(GOLDEN, "1", backend), windowed(2000), backend, "1000 ms", "2000 ms");
    }

    /** State of 0.5 and before has no shape record: it restores unchecked, as it did. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void stateWithoutARecordRestores(Backend backend) throws Exception {
        try (var h = CountFunctionTest.harness(running(), backend)) {
            h.initializeState(read("count", "0.5", backend));
            h.open();
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            assertThat(h.extractOutputValues()).filteredOn(e -> e.isFinal).hasSize(5);
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        for (Backend backend : Backend.values()) {
            java.nio.file.Path golden = file(GOLDEN, "1", backend);
            if (!java.nio.file.Files.exists(golden)) { // a committed file is never rewritten
                OperatorSnapshotUtil.writeStateHandle(
                        snapshotOf(windowed(1000), backend), golden.toString());
            }
        }
    }
}
