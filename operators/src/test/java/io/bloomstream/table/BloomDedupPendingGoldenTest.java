package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Restores committed snapshots of {@code BLOOM_DEDUP} with {@code first_by => 'EVENT_TIME'} taken
 * while rows wait for the watermark ({@code bloom_pending}, format 1 of {@code PendingRows}), on
 * the heap and RocksDB: the rows are judged when the watermark passes them after the restore, the
 * earliest of each id returned, ids judged before the snapshot stay duplicates. The first restored
 * run sends a watermark before any row, so the timers judge under the call the rows recorded.
 *
 * <p>Files {@code sql-dedup-pending-1-BACKEND.snapshot} under {@code
 * src/test/resources/savepoints}; write them (only when the format changes, as a new version) with
 * {@code -Dbloomstream.writeSnapshots=true}.
 */
class BloomDedupPendingGoldenTest {

    /**
     * The input before the snapshot: key, id, event time. The watermark is then 1000: "a" at 500
     * was judged and returned; the rest wait.
     */
    private static final Object[][] BEFORE = {
        {"k0", "a", 500L},
        {"k0", "b", 3000L},
        {"k0", "b", 2000L}, // earlier: b's first
        {"k0", "a", 2500L}, // a duplicate of a at 500
        {"k1", "b", 2000L},
        {"k1", "b", 2000L}, // a tie: the first to arrive wins
        {"k1", "c", 4000L},
    };

    /** The rows returned after the restore when the watermark passes 5000: key, id, time. */
    private static final List<String> AFTER = List.of("k0,b,2000", "k1,b,2000", "k1,c,4000");

    @ParameterizedTest(name = "{0}")
    @EnumSource(Backend.class)
    void rowsWaitingInASnapshotAreJudgedAfterTheRestore(Backend backend) throws Exception {
        PtfHarness.Plan plan = plan();
        try (HarnessMetrics metrics = new HarnessMetrics()) {
            PtfHarness h = new PtfHarness(plan, metrics.environment());
            h.setStateBackend(backend.create());
            h.setupOutput();
            h.initializeState(OperatorSnapshotUtil.readStateHandle(file(backend).toString()));
            h.open();
            h.processWatermark(5_000); // before any row: the timers configure from the rows
            assertThat(returned(h)).containsExactlyInAnyOrderElementsOf(AFTER);
            // Every id returned is remembered; a new id passes when its time comes.
            send(h, plan, "k0", "a", 6_000);
            send(h, plan, "k0", "b", 6_000);
            send(h, plan, "k1", "c", 6_000);
            send(h, plan, "k1", "d", 6_000);
            h.processWatermark(7_000);
            assertThat(returned(h)).containsExactly("k1,d,6000");
            h.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Backend.class)
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots(Backend backend) throws Exception {
        PtfHarness.Plan plan = plan();
        try (HarnessMetrics metrics = new HarnessMetrics()) {
            PtfHarness h = new PtfHarness(plan, metrics.environment());
            h.setStateBackend(backend.create());
            h.setupOutput();
            h.open();
            for (int i = 0; i < BEFORE.length; i++) {
                if (i == 1) {
                    h.processWatermark(1_000);
                }
                send(h, plan, (String) BEFORE[i][0], (String) BEFORE[i][1], (Long) BEFORE[i][2]);
            }
            assertThat(returned(h)).containsExactly("k0,a,500");
            Files.createDirectories(file(backend).getParent());
            OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), file(backend).toString());
            h.close();
        }
    }

    private static Path file(Backend backend) {
        return Path.of(
                "src/test/resources/savepoints/sql-dedup-pending-1-"
                        + backend.name().toLowerCase(java.util.Locale.ROOT)
                        + ".snapshot");
    }

    private static void send(PtfHarness h, PtfHarness.Plan plan, String k, String id, long time)
            throws Exception {
        GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), StringData.fromString(k));
        row.setField(plan.column("id"), StringData.fromString(id));
        row.setField(plan.column("ts"), TimestampData.fromEpochMillis(time));
        h.processElement(row);
    }

    /** The rows returned since the last call, as "key,id,time", in order. */
    private static List<String> returned(PtfHarness h) {
        List<String> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord<?> r) {
                RowData row = (RowData) r.getValue(); // k, id, ts, rowtime
                out.add(
                        row.getString(0)
                                + ","
                                + row.getString(1)
                                + ","
                                + row.getTimestamp(2, 3).getMillisecond());
            }
        }
        h.getOutput().clear();
        return out;
    }

    private static PtfHarness.Plan plan() {
        return PtfHarness.planOverEvents(
                false,
                true,
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k,"
                        + " id_column => 'id', expected_items => 100, fpp => 0.01,"
                        + " exact => TRUE, state_ttl => INTERVAL '1' DAY,"
                        + " on_time => DESCRIPTOR(ts))");
    }
}
