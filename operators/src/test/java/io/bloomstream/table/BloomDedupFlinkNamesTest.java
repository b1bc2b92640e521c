package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.HarnessMetrics;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tests for {@link DedupTableFunction} under Flink's argument names ({@code state_ttl}, {@code
 * reset_ttl_on_duplicate}, as {@code DEDUPLICATE_KEEP_FIRST} has them) and the old {@code
 * retention}, on one subtask of the planned operator.
 */
class BloomDedupFlinkNamesTest {

    /**
     * One id at 1 s, 9 s and 17 s of event time, each after a watermark just below it, under a
     * retention R of 10 s in 11 generations (L = R / 10 = 1 s). The first is returned; the second,
     * 8 s < R after it, never is. The third is 16 s >= R + L after the first returned row: without
     * reset it is returned (the guarantee, unless a false positive: one id under a fixed seed, the
     * same every run); with reset the second refreshed the id, and the third is 8 s < R after it,
     * so it is a duplicate.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "retention => INTERVAL '10' SECOND | 1000, 17000",
                "retention => INTERVAL '10' SECOND, reset_ttl_on_duplicate => FALSE | 1000, 17000",
                "retention => INTERVAL '10' SECOND, reset_ttl_on_duplicate => TRUE | 1000",
                "state_ttl => INTERVAL '10' SECOND | 1000",
                "state_ttl => INTERVAL '10' SECOND, reset_ttl_on_duplicate => TRUE | 1000",
                "state_ttl => INTERVAL '10' SECOND, reset_ttl_on_duplicate => FALSE | 1000, 17000",
            })
    void aDuplicateRefreshesTheIdOnlyWithReset(String args, String returned) throws Exception {
        List<Long> out = new ArrayList<>();
        try (HarnessMetrics metrics = new HarnessMetrics()) {
            PtfHarness.Plan plan = plan(args);
            PtfHarness harness = new PtfHarness(plan, metrics.environment());
            harness.setupOutput();
            harness.open();
            for (long t : new long[] {1_000, 9_000, 17_000}) {
                harness.processWatermark(t - 1);
                GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
                row.setField(plan.column("k"), StringData.fromString("k"));
                row.setField(plan.column("id"), StringData.fromString("a"));
                row.setField(plan.column("ts"), TimestampData.fromEpochMillis(t));
                harness.processElement(row);
                for (Object o : harness.getOutput()) {
                    if (o instanceof StreamRecord) {
                        out.add(t);
                    }
                }
                harness.getOutput().clear();
            }
            harness.close();
        }
        assertThat(out.stream().map(String::valueOf).collect(Collectors.joining(", ")))
                .isEqualTo(returned);
    }

    private static PtfHarness.Plan plan(String args) throws Exception {
        return PtfHarness.plan(
                (env, t) ->
                        t.createTemporaryView(
                                "events",
                                t.fromDataStream(
                                        env.fromData(Row.of("k", "i", Instant.EPOCH))
                                                .returns(
                                                        Types.ROW_NAMED(
                                                                new String[] {"k", "id", "ts"},
                                                                Types.STRING,
                                                                Types.STRING,
                                                                Types.INSTANT)),
                                        Schema.newBuilder()
                                                .column("k", DataTypes.STRING())
                                                .column("id", DataTypes.STRING())
                                                .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                                                .watermark("ts", "SOURCE_WATERMARK()")
                                                .build())),
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k,"
                        + " id_column => 'id', expected_items => 1000, fpp => 0.01, "
                        + args
                        + ", generations => 11, on_time => DESCRIPTOR(ts), first_by => 'ARRIVAL')");
    }
}
