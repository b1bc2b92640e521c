package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests that {@code table.exec.state.ttl}, the option users set to bound the state of exact
 * queries, does not expire {@code BLOOM_DEDUP}'s state: the function pins its state hints to no
 * expiry and frees state by its own {@code retention}. Flink's state TTL runs on processing time;
 * the harness sets the clock that the state backends' TTL reads ({@code
 * setStateTtlProcessingTime}), so the test moves it past the TTL deterministically. The state is
 * read after a restore, by a new function instance whose read cache is empty, so every answer comes
 * from Flink state.
 */
class BloomDedupStateTtlTest {

    private static final int IDS = 1000;
    private static final int KEYS = 5;

    /** One second: the clock moves an hour past it. */
    private static final Map<String, String> SHORT_TTL = Map.of("table.exec.state.ttl", "1 s");

    private static final long HOUR = 3_600_000L;

    private static RowData row(PtfHarness.Plan plan, int i) {
        GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), StringData.fromString("k" + (i % KEYS)));
        row.setField(plan.column("id"), StringData.fromString(Integer.toString(i)));
        row.setField(plan.column("seq"), (long) i);
        row.setField(
                plan.column("ts"), TimestampData.fromEpochMillis(1_700_000_000_000L + 10L * i));
        return row;
    }

    private static PtfHarness harness(PtfHarness.Plan plan, Backend backend) throws Exception {
        PtfHarness h = new PtfHarness(plan, new HarnessMetrics(128, 1, 0).environment());
        h.setStateBackend(backend.create());
        h.setupOutput();
        return h;
    }

    private static long returned(PtfHarness h) {
        long n = h.getOutput().stream().filter(o -> o instanceof StreamRecord).count();
        h.getOutput().clear();
        return n;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void idsStayDeduplicatedPastTheGlobalStateTtl(Backend backend) throws Exception {
        for (BloomDedupGoldenSnapshotTest.Case c : BloomDedupGoldenSnapshotTest.Case.values()) {
            PtfHarness.Plan plan = BloomDedupModelRun.plan(c.base, SHORT_TTL);
            OperatorSubtaskState snapshot;
            try (PtfHarness h = harness(plan, backend)) {
                h.setStateTtlProcessingTime(0);
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(row(plan, i));
                }
                // 1000 new ids at fpp 1%: at most 10 expected drops; 990 allows 4.5 sigma.
                assertThat(returned(h)).as("%s: first occurrences", c).isBetween(990L, (long) IDS);
                snapshot = h.snapshot(1, 1);
            }
            try (PtfHarness h = harness(plan, backend)) {
                // An hour later on the TTL clock: state under a 1 s TTL would have expired.
                h.setStateTtlProcessingTime(HOUR);
                h.initializeState(snapshot);
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(row(plan, i));
                }
                assertThat(returned(h))
                        .as("%s: every id is still remembered past table.exec.state.ttl", c)
                        .isZero();
            }
        }
    }
}
