package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.testing.HarnessMetrics;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tests for {@link DedupTableFunction} (first by arrival, to see each row's fate at once) with rows
 * at or before the watermark, on the Flink this test runs on: the operators' suites run it on the
 * default line (2.3) and the {@code flink-2.2} module on 2.2. Flink 2.2 drops such a row before
 * {@code eval()} (its {@code ProcessTableRunner.processEval} returns early for {@code rowtime <=
 * watermark}); Flink 2.3 passes it to {@code eval()} (FLINK-39436, FLIP-565). Each case asserts
 * what its line does.
 */
class LateRowsAcrossFlinkVersionsTest {

    private static final String RETENTION = ", retention => INTERVAL '10' SECOND";

    /** True on Flink 2.3 and later, which pass late rows to a PTF's {@code eval()}. */
    static boolean flinkPassesLateRows() {
        String[] v = EnvironmentInformation.getVersion().split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        return major > 2 || (major == 2 && minor >= 3);
    }

    @Test
    void runsOnAKnownFlinkLine() {
        assertThat(EnvironmentInformation.getVersion()).matches("2\\.[23]\\..*");
    }

    /**
     * Flink's rule, with or without a retention: a row below the watermark is late, dropped, and
     * marks nothing; a row at the watermark is judged. Flink 2.2 drops both before {@code eval()},
     * silently; 2.3 passes both, and the function counts the late one in {@code bloomLate}.
     */
    @ParameterizedTest(name = "retention: [{0}]")
    @ValueSource(strings = {"", RETENTION})
    void aRowBelowTheWatermarkIsLateAndARowAtItIsJudgedWhereFlinkPassesIt(String retention)
            throws Exception {
        try (Run run = new Run(retention)) {
            assertThat(run.row("a", 5_000)).containsExactly("a");
            run.watermark(10_000);

            assertThat(run.row("b", 9_000)).isEmpty(); // late, and b stays unseen
            assertThat(run.row("a", 9_500)).isEmpty(); // late
            List<String> atWatermark = run.row("c", 10_000);

            assertThat(run.metrics.count(DedupMetrics.LATE))
                    .isEqualTo(flinkPassesLateRows() ? 2 : 0);
            assertThat(atWatermark).isEqualTo(flinkPassesLateRows() ? List.of("c") : List.of());
            assertThat(run.metrics.count(DedupMetrics.DUPLICATES)).isZero();
            // The late row did not mark b: its next row after the watermark is a first.
            assertThat(run.row("b", 10_001)).containsExactly("b");
        }
    }

    /** One subtask of a planned {@code BLOOM_DEDUP} call partitioned by {@code k}. */
    private static final class Run implements AutoCloseable {
        final HarnessMetrics metrics = new HarnessMetrics();
        final PtfHarness.Plan plan;
        final PtfHarness harness;

        Run(String retention) throws Exception {
            plan =
                    PtfHarness.plan(
                            (env, t) ->
                                    t.createTemporaryView(
                                            "events",
                                            t.fromDataStream(
                                                    env.fromData(Row.of("k", "i", Instant.EPOCH))
                                                            .returns(
                                                                    Types.ROW_NAMED(
                                                                            new String[] {
                                                                                "k", "id", "ts"
                                                                            },
                                                                            Types.STRING,
                                                                            Types.STRING,
                                                                            Types.INSTANT)),
                                                    Schema.newBuilder()
                                                            .column("k", DataTypes.STRING())
                                                            .column("id", DataTypes.STRING())
                                                            .column(
                                                                    "ts",
                                                                    DataTypes.TIMESTAMP_LTZ(3))
                                                            .watermark("ts", "SOURCE_WATERMARK()")
                                                            .build())),
                            "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k,"
                                    + " id_column => 'id', expected_items => 1000, fpp => 0.01"
                                    + retention
                                    + ", on_time => DESCRIPTOR(ts), first_by => 'ARRIVAL')");
            harness = new PtfHarness(plan, metrics.environment());
            harness.setupOutput();
            harness.open();
        }

        /** Sends one row of key {@code k}; returns the ids it returned. */
        List<String> row(String id, long timestamp) throws Exception {
            GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
            row.setField(plan.column("k"), StringData.fromString("k"));
            row.setField(plan.column("id"), StringData.fromString(id));
            row.setField(plan.column("ts"), TimestampData.fromEpochMillis(timestamp));
            harness.processElement(row);
            List<String> ids =
                    harness.getOutput().stream()
                            .filter(o -> o instanceof StreamRecord)
                            .map(o -> ((RowData) ((StreamRecord<?>) o).getValue()).getString(1))
                            .map(StringData::toString)
                            .collect(Collectors.toList());
            harness.getOutput().clear();
            return ids;
        }

        void watermark(long wm) throws Exception {
            harness.processWatermark(wm);
            harness.getOutput().clear();
        }

        @Override
        public void close() throws Exception {
            harness.close();
            metrics.close();
        }
    }
}
