package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupScenario.Base;
import io.bloomstream.flink.dedup.DedupScenario.Mode;
import io.bloomstream.testing.Backend;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@code BLOOM_DEDUP(..., exact => TRUE)}: with a deliberately bad filter (fpp 0.3) it
 * returns exactly the rows of Flink's {@code ROW_NUMBER} keep-first query on the same rows, while
 * the same query without {@code exact} misses many first rows; and under {@code state_ttl} the
 * exact entries of a generation go with it.
 */
class BloomDedupExactTest {

    private static final int IDS = 1500;
    private static final int ROWS = 4000;

    /**
     * The BIGINT id of id "id-k", one to one: odd k in the UTF-16 surrogate range (0xD800 + k), 0
     * as 63 ('?'), even k above both. Stored as 16-bit chars in a UTF-8 {@code MapView} key, every
     * odd k and 0 would be one key (a lone surrogate is encoded as '?').
     */
    private static long bigint(int k) {
        return k == 0 ? 63 : k % 2 == 1 ? 0xD800 + k : 100_000 + k;
    }

    /** The rows: (id, n, x, ts): id "id-k" and n = bigint(k), x the row's number, ts 1 s apart. */
    private static List<Row> rows() {
        Random random = new Random(31);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < ROWS; i++) {
            int k = random.nextInt(IDS);
            rows.add(Row.of("id-" + k, bigint(k), i, Instant.ofEpochSecond(i)));
        }
        return rows;
    }

    private static StreamTableEnvironment env(Backend backend, List<Row> rows) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(backend.jobConfig());
        env.setParallelism(2);
        StreamTableEnvironment t = SqlTesting.tableEnv(env);
        t.createTemporaryView(
                "events",
                t.fromDataStream(
                        env.fromData(rows)
                                .returns(
                                        Types.ROW_NAMED(
                                                new String[] {"id", "n", "x", "ts"},
                                                Types.STRING,
                                                Types.LONG,
                                                Types.INT,
                                                Types.INSTANT)),
                        Schema.newBuilder()
                                .column("id", DataTypes.STRING())
                                .column("n", DataTypes.BIGINT())
                                .column("x", DataTypes.INT())
                                .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                                .watermark("ts", "ts - INTERVAL '1' SECOND")
                                .build()));
        t.executeSql("CREATE TEMPORARY VIEW events_p AS SELECT *, PROCTIME() AS pt FROM events");
        return t;
    }

    /** The first row of each id, in the order of {@code rows}: "id,x". */
    private static Set<String> firstByArrival(List<Row> rows) {
        Map<String, Integer> first = new LinkedHashMap<>();
        for (Row r : rows) {
            first.putIfAbsent((String) r.getField(0), (Integer) r.getField(2));
        }
        Set<String> out = new HashSet<>();
        first.forEach((id, x) -> out.add(id + "," + x));
        return out;
    }

    private static Set<String> run(StreamTableEnvironment t, String query) throws Exception {
        Set<String> out = new HashSet<>();
        for (Row r : SqlTesting.collect(t, query)) {
            assertThat(out.add(r.getField(0) + "," + r.getField(1))).as("returned twice").isTrue();
        }
        return out;
    }

    private static String bloomDedup(String idColumn, boolean exact) {
        return "SELECT id, x FROM BLOOM_DEDUP(input => TABLE events, id_column => '"
                + idColumn
                + "', expected_items => 100, fpp => 0.3"
                + (exact ? ", exact => TRUE" : "")
                + ")";
    }

    /**
     * Heap with a STRING id, RocksDB with a BIGINT id (both kinds of exact keys). The control
     * without {@code exact}: a filter at fpp 0.3 drops a first row at a rate of up to 0.3; the rows
     * and the hash seed are fixed, so it drops the same rows every run (433 of the 1401 first rows,
     * with {@code expected_items} 100, far too small); the test asks for more than a fifth, to show
     * that the filter alone is bad.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void exactReturnsTheRowsOfRowNumberWithABadFilter(Backend backend) throws Exception {
        List<Row> rows = rows();
        StreamTableEnvironment t = env(backend, rows);
        Set<String> rowNumber =
                run(
                        t,
                        "SELECT id, x FROM ("
                                + " SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt ASC)"
                                + " AS row_num FROM events_p)"
                                + " WHERE row_num = 1");
        assertThat(rowNumber).isEqualTo(firstByArrival(rows));
        String idColumn = backend == Backend.HEAP ? "id" : "n";
        Set<String> exact = run(t, bloomDedup(idColumn, true));
        assertThat(exact).as("exact on %s, id column %s", backend, idColumn).isEqualTo(rowNumber);
        if (backend == Backend.HEAP) {
            Set<String> control = run(t, bloomDedup(idColumn, false));
            assertThat(control).isSubsetOf(rowNumber);
            System.out.printf(
                    "exact: %d of %d first rows; without exact %d missing%n",
                    exact.size(), rowNumber.size(), rowNumber.size() - control.size());
            assertThat(rowNumber.size() - control.size())
                    .as("first rows the filter alone drops at fpp 0.3")
                    .isGreaterThan(rowNumber.size() / 5);
        }
    }

    /**
     * Under a retention (3 generations of 15 s over 30 s) the exact entries of a key go with its
     * generations: keys 0 and 1 get rows in the first 5 s, keys 2 to 4 from 60 s on; once the
     * watermark has passed the first keys' generations (ended by 15 s, expired at 45 s) only the
     * later keys hold exact entries, and once it passes theirs, none do. Every first occurrence
     * passes at fpp 0.3 (exact), every repeat within the retention is dropped.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void exactEntriesExpireWithTheirGeneration(Backend backend) throws Exception {
        Base base =
                new Base(
                        Mode.EVENT_TIME,
                        30_000,
                        3,
                        0,
                        false,
                        10,
                        30,
                        io.bloomstream.filter.FilterSpec.AUTO_PAGE_BITS,
                        0,
                        io.bloomstream.filter.Hasher.DEFAULT_SEED,
                        0L);
        PtfHarness.Plan plan = BloomDedupModelRun.plan(base, Map.of(), ", exact => TRUE");
        long t0 = 1_700_000_000_000L;
        try (PtfHarness h = BloomDedupGoldenSnapshotTest.harness(plan, backend)) {
            h.open();
            for (int i = 0; i < 500; i++) {
                h.processElement(row(plan, "k" + (i % 2), "early-" + i, t0 + 10L * i));
            }
            for (int i = 0; i < 500; i++) {
                h.processElement(row(plan, "k" + (2 + i % 3), "late-" + i, t0 + 60_000 + 10L * i));
            }
            assertThat(BloomDedupGoldenSnapshotTest.returned(h))
                    .as("every first occurrence, at fpp 0.3")
                    .isEqualTo(1000);
            for (int i = 0; i < 500; i++) {
                h.processElement(row(plan, "k" + (2 + i % 3), "late-" + i, t0 + 66_000 + 10L * i));
            }
            assertThat(BloomDedupGoldenSnapshotTest.returned(h)).as("repeats").isZero();
            assertThat(exactKeys(h)).as("keys with exact entries").isEqualTo(5);
            h.processWatermark(t0 + 59_000);
            assertThat(exactKeys(h)).as("after the early keys' generations expired").isEqualTo(3);
            h.processWatermark(t0 + 300_000);
            assertThat(exactKeys(h)).as("after every generation expired").isZero();
        }
    }

    /**
     * Exact mode switched on at a restore: the ids the snapshot holds (layout 5, written without
     * exact mode) have no exact entries, so each is returned once more, then remembered; the other
     * way, a snapshot with exact entries restored without exact mode remembers every id through its
     * filter.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void switchingExactModeAtARestore(Backend backend) throws Exception {
        String layout = "5-xxh3_64";
        BloomDedupGoldenSnapshotTest.Case[] cases = {
            BloomDedupGoldenSnapshotTest.Case.PLAIN, BloomDedupGoldenSnapshotTest.Case.EXACT_PLAIN
        };
        for (BloomDedupGoldenSnapshotTest.Case written : cases) {
            boolean exactNow = !written.exact;
            PtfHarness.Plan plan =
                    BloomDedupModelRun.plan(
                            written.base, Map.of(), exactNow ? ", exact => TRUE" : "");
            try (PtfHarness h = BloomDedupGoldenSnapshotTest.harness(plan, backend)) {
                h.initializeState(
                        org.apache.flink.streaming.util.OperatorSnapshotUtil.readStateHandle(
                                written.file(layout, backend).toString()));
                h.open();
                for (int i = 0; i < 1000; i++) {
                    h.processElement(BloomDedupGoldenSnapshotTest.row(plan, i));
                }
                assertThat(BloomDedupGoldenSnapshotTest.returned(h))
                        .as("%s restored with exact %s", written, exactNow)
                        .isEqualTo(exactNow ? 1000 : 0);
                for (int i = 0; i < 1000; i++) {
                    h.processElement(BloomDedupGoldenSnapshotTest.row(plan, i));
                }
                assertThat(BloomDedupGoldenSnapshotTest.returned(h)).as("then remembered").isZero();
            }
        }
    }

    private static org.apache.flink.table.data.RowData row(
            PtfHarness.Plan plan, String key, String id, long time) {
        org.apache.flink.table.data.GenericRowData row =
                new org.apache.flink.table.data.GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), org.apache.flink.table.data.StringData.fromString(key));
        row.setField(plan.column("id"), org.apache.flink.table.data.StringData.fromString(id));
        row.setField(plan.column("seq"), 0L);
        row.setField(
                plan.column("ts"), org.apache.flink.table.data.TimestampData.fromEpochMillis(time));
        return row;
    }

    private static long exactKeys(PtfHarness h) {
        try (java.util.stream.Stream<?> keys =
                h.keyedStateBackend()
                        .getKeys(
                                DedupTableFunction.EXACT_V6_STATE,
                                org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return keys.count();
        }
    }
}
