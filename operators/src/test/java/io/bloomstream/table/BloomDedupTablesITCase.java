package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.testing.MiniClusters;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link BloomDedupTables} on a mini cluster at parallelism 2: against Flink's {@code
 * ROW_NUMBER} keep-first on the same rows, and with a rowtime that an event-time window reads after
 * the dedup.
 */
class BloomDedupTablesITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static StreamExecutionEnvironment env() {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        return env;
    }

    /** 3,000 rows over 700 ids of three kinds of column, from a fixed seed. */
    private static List<Row> rows() {
        Random random = new Random(41);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            int id = random.nextInt(700);
            rows.add(Row.of("id-" + id, (long) id * 1_000_003L, i));
        }
        return rows;
    }

    /**
     * In exact mode (no false positives) the result is, row for row, Flink's keep-first {@code
     * ROW_NUMBER} by processing time: one source task feeds both, so each id's rows reach the dedup
     * in the order of the input, and the first passes.
     */
    @Test
    void keepsTheRowsRowNumberKeepsFirst() throws Exception {
        StreamExecutionEnvironment env = env();
        StreamTableEnvironment t = SqlTesting.tableEnv(env);
        // One source task, so both queries see each id's rows in the order of the list.
        DataStream<Row> stream =
                env.fromData(
                                rows(),
                                Types.ROW_NAMED(
                                        new String[] {"id", "num", "seq"},
                                        Types.STRING,
                                        Types.LONG,
                                        Types.INT))
                        .setParallelism(1);
        Table input = t.fromDataStream(stream);
        t.createTemporaryView("input_rows", input);
        List<Row> expected =
                SqlTesting.collect(
                        t,
                        "SELECT id, num, seq FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id"
                                + " ORDER BY pt) AS rn FROM (SELECT *, PROCTIME() AS pt FROM"
                                + " input_rows)) WHERE rn = 1");
        assertThat(expected).hasSize(distinct(rows(), 0));

        DedupConfig config = DedupConfig.builder().expectedItems(1_000).exact(true).build();
        for (String idColumn : List.of("id", "num")) {
            Table firsts = BloomDedupTables.dedup(t, input, idColumn, config);
            assertThat(firsts.getResolvedSchema()).isEqualTo(input.getResolvedSchema());
            t.createTemporaryView("firsts_" + idColumn, firsts);
            List<Row> actual = SqlTesting.collect(t, "SELECT * FROM firsts_" + idColumn);
            assertThat(actual).as("by " + idColumn).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    /**
     * The rowtime stays the rowtime: a tumbling event-time window reads it after the dedup, and its
     * windows close on the input's watermarks. The dedup runs with an event-time retention, which
     * needs the rows' timestamps: had the conversion lost them, every row would be rejected.
     */
    @Test
    void keepsTheRowtimeForAnEventTimeWindow() throws Exception {
        StreamExecutionEnvironment env = env();
        StreamTableEnvironment t = SqlTesting.tableEnv(env);
        LocalDateTime start = LocalDateTime.of(2026, 1, 1, 0, 0);
        List<Row> events = new ArrayList<>();
        Map<Long, Set<String>> idsByWindow = new TreeMap<>();
        Set<String> seen = new HashSet<>();
        Random random = new Random(7);
        for (int i = 0; i < 600; i++) {
            String id = "e" + random.nextInt(200);
            long second = i / 10; // ten rows a second, in order
            events.add(Row.of(id, start.plusSeconds(second)));
            if (seen.add(id)) {
                idsByWindow.computeIfAbsent(second / 10, w -> new HashSet<>()).add(id);
            }
        }
        Map<LocalDateTime, Long> expected = new HashMap<>();
        idsByWindow.forEach((w, ids) -> expected.put(start.plusSeconds(w * 10), (long) ids.size()));
        assertThat(expected.size()).isGreaterThan(3);

        DataStream<Row> stream =
                env.fromData(
                        events,
                        Types.ROW_NAMED(
                                new String[] {"id", "ts"}, Types.STRING, Types.LOCAL_DATE_TIME));
        Table input =
                t.fromDataStream(
                        stream,
                        Schema.newBuilder()
                                .column("id", DataTypes.STRING())
                                .column("ts", DataTypes.TIMESTAMP(3))
                                .watermark("ts", "ts - INTERVAL '1' SECOND")
                                .build());
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(1_000)
                        .exact(true)
                        .retention(Duration.ofHours(1), TimeDomain.EVENT_TIME)
                        .build();
        Table firsts = BloomDedupTables.dedup(t, input, "id", config);
        // The same columns, ts still the rowtime; the watermark is now the input's, as it was.
        assertThat(firsts.getResolvedSchema().getColumns())
                .isEqualTo(input.getResolvedSchema().getColumns());
        assertThat(firsts.getResolvedSchema().getWatermarkSpecs().get(0).getRowtimeAttribute())
                .isEqualTo("ts");
        t.createTemporaryView("firsts", firsts);

        Map<LocalDateTime, Long> actual = new HashMap<>();
        for (Row r :
                SqlTesting.collect(
                        t,
                        "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE firsts,"
                                + " DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start,"
                                + " window_end")) {
            actual.put((LocalDateTime) r.getField(0), (Long) r.getField(1));
        }
        assertThat(actual).isEqualTo(expected);
    }

    private static int distinct(List<Row> rows, int column) {
        Set<Object> ids = new HashSet<>();
        rows.forEach(r -> ids.add(r.getField(column)));
        return ids.size();
    }
}
