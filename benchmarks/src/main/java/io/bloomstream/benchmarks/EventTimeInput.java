package io.bloomstream.benchmarks;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * The event-time input of {@link SqlBenchmark}'s {@code *_et} queries (issue 40): the view {@code
 * events} with the ids of the insert-only input ({@code id}, {@code x}) and a rowtime {@code ts},
 * row i at i ms plus a jitter in [0, D) fixed per row ({@link SqlBenchmark#eventTimeOf}), under the
 * SQL watermark {@code ts - D ms}. Row i's time is at least i, and the watermark when it comes at
 * most (i - 1) + (D - 1) - D: no row is late.
 */
final class EventTimeInput {

    private EventTimeInput() {}

    /**
     * Registers {@code events}: {@code rows} rows of {@code ids} distinct ids in passes over the
     * same order, the real rows through {@code stamp} (after the last one the source emits markers
     * with id -1, dropped there, until the job is stopped).
     */
    static void events(
            StreamExecutionEnvironment env,
            StreamTableEnvironment tEnv,
            long rows,
            long ids,
            long disorderMs,
            SqlRun.StampRealIds stamp) {
        DataGeneratorSource<Tuple2<Long, Long>> source =
                new DataGeneratorSource<>(
                        i ->
                                Tuple2.of(
                                        i < rows ? JobBenchmark.idOf(i, ids) : -1L,
                                        SqlBenchmark.eventTimeOf(Math.min(i, rows), disorderMs)),
                        Long.MAX_VALUE,
                        Types.TUPLE(Types.LONG, Types.LONG));
        DataStream<Tuple2<Long, Long>> xs =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "ids")
                        .uid("ids")
                        .filter(t -> stamp.filter(t.f0))
                        .uid("real-ids")
                        .name("real-ids");
        tEnv.createTemporaryView(
                "xs",
                tEnv.fromDataStream(
                        xs,
                        Schema.newBuilder()
                                .column("f0", DataTypes.BIGINT())
                                .column("f1", DataTypes.BIGINT())
                                .columnByExpression("ts", "TO_TIMESTAMP_LTZ(f1, 3)")
                                .watermark("ts", "ts - " + interval(disorderMs))
                                .build()));
        tEnv.executeSql(
                "CREATE TEMPORARY VIEW events AS SELECT CAST(f0 AS STRING) AS id, f0 AS x, ts"
                        + " FROM xs");
    }

    /**
     * The SQL interval of {@code ms} milliseconds: {@code INTERVAL '1.000' SECOND} (below 100 s).
     */
    static String interval(long ms) {
        return String.format(
                java.util.Locale.ROOT, "INTERVAL '%d.%03d' SECOND", ms / 1000, ms % 1000);
    }
}
