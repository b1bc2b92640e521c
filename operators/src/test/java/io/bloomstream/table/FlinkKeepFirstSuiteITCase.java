package io.bloomstream.table;

import static org.apache.flink.table.api.Expressions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.types.DataType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link DedupTableFunction} in exact mode against Flink's own keep-first test programs
 * (issue 40): every case of {@code DeduplicateKeepFirstTestPrograms} (Flink master's {@code
 * DEDUPLICATE_KEEP_FIRST}) and the keep-first cases of {@code DeduplicationTestPrograms} ({@code
 * ROW_NUMBER}), with their input rows and expected rows. Each case first runs Flink's {@code
 * ROW_NUMBER ... ORDER BY} keep-first query on the same input and asserts Flink's expected rows
 * (the port is right), then {@code BLOOM_DEDUP(..., exact => TRUE)} with Flink's key as its {@code
 * id_column} (several columns as a list), then the same without exact mode, which may only miss a
 * row to a false positive. The timed inputs have Flink's watermark {@code ts - 10 s}, emitted after
 * every row (as Flink's test source emits it), so a row below it is late as in Flink's test.
 */
class FlinkKeepFirstSuiteITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final String USER_EVENTS = "user_name STRING, action STRING";
    private static final String TIMED_EVENTS = "user_name STRING, action STRING, ts TIMESTAMP_LTZ";

    private static StreamExecutionEnvironment env;
    private static StreamTableEnvironment t;
    private static int views;

    @BeforeAll
    static void setUp() {
        env = StreamExecutionEnvironment.getExecutionEnvironment(Backend.HEAP.jobConfig());
        env.setParallelism(1);
        t = SqlTesting.tableEnv(env);
    }

    // ---- Cases BLOOM_DEDUP gives Flink's rows for ----

    /** DeduplicateKeepFirstTestPrograms.KEYED. */
    @Test
    void keyed() throws Exception {
        String v = view(USER_EVENTS, Row.of("Vas", "login"), Row.of("Vas", "click"));
        assertKeepFirst(
                rowNumber(v, "user_name", "user_name, action", "pt"),
                bloomDedup(v, "user_name", "*", ""),
                Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.TABLE_API: through {@code Table.process}. */
    @Test
    void tableApi() throws Exception {
        String v = view(USER_EVENTS, Row.of("Vas", "login"), Row.of("Vas", "click"));
        assertThat(collect(rowNumber(v, "user_name", "user_name, action", "pt")))
                .containsExactly(Row.of("Vas", "login"));
        Table out =
                t.from(v)
                        .process(
                                "BLOOM_DEDUP",
                                lit("user_name").asArgument("id_column"),
                                lit(100).asArgument("expected_items"),
                                lit(new BigDecimal("0.01"), DataTypes.DECIMAL(38, 18).notNull())
                                        .asArgument("fpp"),
                                lit(true).asArgument("exact"));
        assertThat(rows(out)).containsExactly(Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.MULTI_KEY. */
    @Test
    void multiKey() throws Exception {
        String v =
                view(
                        USER_EVENTS,
                        Row.of("Vas", "login"),
                        Row.of("Alice", "click"),
                        Row.of("Vas", "click"),
                        Row.of("Alice", "view"));
        assertKeepFirst(
                rowNumber(v, "user_name", "user_name, action", "pt"),
                bloomDedup(v, "user_name", "*", ""),
                Row.of("Vas", "login"),
                Row.of("Alice", "click"));
    }

    /** DeduplicateKeepFirstTestPrograms.MULTI_COLUMN_KEY: both columns in id_column. */
    @Test
    void multiColumnKey() throws Exception {
        String v =
                view(
                        "region STRING, user_name STRING, action STRING",
                        Row.of("EU", "Vas", "login"),
                        Row.of("EU", "Vas", "click"),
                        Row.of("US", "Vas", "signup"),
                        Row.of("EU", "Alice", "view"));
        assertKeepFirstInBothModes(
                rowNumber(v, "region, user_name", "region, user_name, action", "pt"),
                bloomDedup(v, "region, user_name", "region, user_name, action", ""),
                Row.of("EU", "Vas", "login"),
                Row.of("US", "Vas", "signup"),
                Row.of("EU", "Alice", "view"));
    }

    /**
     * Beyond Flink's cases: a key of several columns keeps a NULL in one column apart from every
     * value and from a NULL in another, and values that a joined id would make equal ("a|b" + "c"
     * and "a" + "b|c", "" + NULL and NULL + "") stay apart, as in Flink's key.
     */
    @Test
    void multiColumnKeyKeepsNullsApartAndCannotCollide() throws Exception {
        String v =
                view(
                        "region STRING, user_name STRING, action STRING",
                        Row.of("a|b", "c", "1"),
                        Row.of("a", "b|c", "2"),
                        Row.of(null, "c", "3"),
                        Row.of("c", null, "4"),
                        Row.of(null, null, "5"),
                        Row.of("", null, "6"),
                        Row.of(null, "", "7"),
                        Row.of(null, "c", "8"),
                        Row.of("a", "b|c", "9"),
                        Row.of(null, null, "10"));
        assertKeepFirstInBothModes(
                rowNumber(v, "region, user_name", "region, user_name, action", "pt"),
                bloomDedup(v, "region, user_name", "region, user_name, action", ""),
                Row.of("a|b", "c", "1"),
                Row.of("a", "b|c", "2"),
                Row.of(null, "c", "3"),
                Row.of("c", null, "4"),
                Row.of(null, null, "5"),
                Row.of("", null, "6"),
                Row.of(null, "", "7"));
    }

    /** DeduplicateKeepFirstTestPrograms.WHOLE_ROW_KEY: every column in id_column. */
    @Test
    void wholeRowKey() throws Exception {
        String v = view(USER_EVENTS, Row.of("Vas", "login"), Row.of("Vas", "login"));
        assertKeepFirst(
                rowNumber(v, "user_name, action", "user_name, action", "pt"),
                bloomDedup(v, "user_name, action", "user_name, action", ""),
                Row.of("Vas", "login"));
    }

    /**
     * DeduplicateKeepFirstTestPrograms.NO_PARTITION_BY: the whole input one group. BLOOM_DEDUP
     * needs an id column: a constant one, in a view.
     */
    @Test
    void noPartitionByThroughAConstantId() throws Exception {
        String v =
                view(
                        USER_EVENTS,
                        Row.of("Vas", "login"),
                        Row.of("Alice", "click"),
                        Row.of("Bob", "view"));
        String k = joinedIdView(v, "0");
        assertKeepFirst(
                "SELECT user_name, action FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY pt) AS rn"
                        + " FROM "
                        + v
                        + "_p) WHERE rn = 1",
                bloomDedup(k, "k", "user_name, action", ""),
                Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.EVENT_TIME_COLUMN_CLASH: a column named event_time. */
    @Test
    void eventTimeColumnClash() throws Exception {
        String v =
                view(
                        "user_name STRING, event_time BIGINT",
                        Row.of("Vas", 100L),
                        Row.of("Vas", 200L));
        assertKeepFirst(
                rowNumber(v, "user_name", "user_name, event_time", "pt"),
                bloomDedup(v, "user_name", "*", ""),
                Row.of("Vas", 100L));
    }

    /**
     * DeduplicationTestPrograms.DEDUPLICATE (ROW_NUMBER by event time, ascending), its rows before
     * and after the restore run as one input; the event time and watermark are Flink's computed
     * column and expression. The rows arrive in event-time order, so the earliest is the first.
     */
    @Test
    void rowNumberByEventTime() throws Exception {
        String o = orders(false);
        assertKeepFirst(
                "SELECT order_id, `user`, product, order_time FROM (SELECT *, ROW_NUMBER() OVER"
                        + " (PARTITION BY product ORDER BY event_time ASC) AS rn FROM "
                        + o
                        + ") WHERE rn = 1",
                bloomDedup(
                        o,
                        "product",
                        "order_id, `user`, product, order_time",
                        ", on_time => DESCRIPTOR(event_time)"),
                ORDERS_FIRST);
    }

    /** DeduplicationTestPrograms.DEDUPLICATE_PROCTIME (ROW_NUMBER by processing time). */
    @Test
    void rowNumberByProcessingTime() throws Exception {
        String o = orders(true);
        assertKeepFirst(
                "SELECT order_id, `user`, product, order_time FROM (SELECT *, ROW_NUMBER() OVER"
                        + " (PARTITION BY product ORDER BY proctime ASC) AS rn FROM "
                        + o
                        + ") WHERE rn = 1",
                bloomDedup(o, "product", "order_id, `user`, product, order_time", ""),
                ORDERS_FIRST);
    }

    /** DeduplicateKeepFirstTestPrograms.NULL_KEY. */
    @Test
    void nullKey() throws Exception {
        String v =
                view(
                        USER_EVENTS,
                        Row.of(null, "login"),
                        Row.of("Vas", "click"),
                        Row.of(null, "click"));
        assertKeepFirstInBothModes(
                rowNumber(v, "user_name", "user_name, action", "pt"),
                bloomDedup(v, "user_name", "*", ""),
                Row.of(null, "login"),
                Row.of("Vas", "click"));
    }

    /** DeduplicateKeepFirstTestPrograms.RESET_WITH_ZERO_TTL. */
    @Test
    void resetWithZeroTtl() throws Exception {
        String v =
                view(
                        USER_EVENTS,
                        Row.of("Vas", "login"),
                        Row.of("Vas", "click"),
                        Row.of("Vas", "view"),
                        Row.of("Vas", "logout"),
                        Row.of("Vas", "login"));
        assertKeepFirst(
                rowNumber(v, "user_name", "user_name, action", "pt"),
                bloomDedup(
                        v,
                        "user_name",
                        "*",
                        ", state_ttl => INTERVAL '0' SECOND, reset_ttl_on_duplicate => TRUE"),
                Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.NO_TTL_RESET. */
    @Test
    void noTtlReset() throws Exception {
        String v =
                view(
                        USER_EVENTS,
                        Row.of("Vas", "login"),
                        Row.of("Vas", "click"),
                        Row.of("Vas", "view"));
        assertKeepFirst(
                rowNumber(v, "user_name", "user_name, action", "pt"),
                bloomDedup(
                        v,
                        "user_name",
                        "*",
                        ", state_ttl => INTERVAL '5' SECOND, reset_ttl_on_duplicate => FALSE"),
                Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.TABLE_API_WITH_ARGS. */
    @Test
    void tableApiWithArgs() throws Exception {
        String v = view(USER_EVENTS, Row.of("Vas", "login"), Row.of("Vas", "click"));
        Table out =
                t.from(v)
                        .process(
                                "BLOOM_DEDUP",
                                lit("user_name").asArgument("id_column"),
                                lit(100).asArgument("expected_items"),
                                lit(new BigDecimal("0.01"), DataTypes.DECIMAL(38, 18).notNull())
                                        .asArgument("fpp"),
                                lit(true).asArgument("exact"),
                                lit(
                                                Duration.ofSeconds(5),
                                                DataTypes.INTERVAL(DataTypes.SECOND(3)).notNull())
                                        .asArgument("state_ttl"),
                                lit(false).asArgument("reset_ttl_on_duplicate"));
        assertThat(rows(out)).containsExactly(Row.of("Vas", "login"));
    }

    /** DeduplicateKeepFirstTestPrograms.EVENT_TIME. */
    @Test
    void eventTime() throws Exception {
        String v =
                view(
                        TIMED_EVENTS,
                        Row.of("Vas", "login", Instant.ofEpochMilli(3000)),
                        Row.of("Vas", "click", Instant.ofEpochMilli(1000)),
                        Row.of("Vas", "view", Instant.ofEpochMilli(5000)));
        assertKeepFirstInBothModes(
                rowNumber(v, "user_name", "user_name, action", "ts"),
                bloomDedup(v, "user_name", "user_name, action", ", on_time => DESCRIPTOR(ts)"),
                Row.of("Vas", "click"));
    }

    /** DeduplicateKeepFirstTestPrograms.EVENT_TIME_MULTI_KEY. */
    @Test
    void eventTimeMultiKey() throws Exception {
        String v =
                view(
                        TIMED_EVENTS,
                        Row.of("Alice", "Hi", Instant.ofEpochMilli(1)),
                        Row.of("Alice", "Hello", Instant.ofEpochMilli(3)),
                        Row.of("Alice", "Hello world", Instant.ofEpochMilli(2)),
                        Row.of("Bob", "I am fine.", Instant.ofEpochMilli(3)),
                        Row.of("Bob", "Comment#1", Instant.ofEpochMilli(6)),
                        Row.of("Carol", "Comment#2", Instant.ofEpochMilli(3)),
                        Row.of("Carol", "Comment#3", Instant.ofEpochMilli(2)),
                        Row.of("Dave", "Comment#4", Instant.ofEpochMilli(4)),
                        Row.of("Dave", "Comment#5", Instant.ofEpochMilli(4)));
        assertKeepFirstInBothModes(
                rowNumber(v, "user_name", "user_name, action, ts AS rowtime", "ts"),
                bloomDedup(
                        v,
                        "user_name",
                        "user_name, action, rowtime",
                        ", on_time => DESCRIPTOR(ts)"),
                Row.of("Alice", "Hi", Instant.ofEpochMilli(1)),
                Row.of("Bob", "I am fine.", Instant.ofEpochMilli(3)),
                Row.of("Carol", "Comment#3", Instant.ofEpochMilli(2)),
                Row.of("Dave", "Comment#4", Instant.ofEpochMilli(4)));
    }

    /** DeduplicateKeepFirstTestPrograms.EVENT_TIME_LATE_DROPPED: runs on 2.2, where it passes. */
    @Test
    void eventTimeLateDropped() throws Exception {
        String v =
                view(
                        TIMED_EVENTS,
                        Row.of("Bob", "early", Instant.ofEpochMilli(1000)),
                        Row.of("Bob", "advance", Instant.ofEpochMilli(20000)),
                        Row.of("Bob", "late", Instant.ofEpochMilli(500)),
                        Row.of("Carol", "late", Instant.ofEpochMilli(500)),
                        Row.of("Carol", "on-time", Instant.ofEpochMilli(30000)));
        assertKeepFirstInBothModes(
                rowNumber(v, "user_name", "user_name, action", "ts"),
                bloomDedup(v, "user_name", "user_name, action", ", on_time => DESCRIPTOR(ts)"),
                Row.of("Bob", "early"),
                Row.of("Carol", "on-time"));
    }

    // ---- Cases that cannot be expressed, or are refused as Flink refuses them ----

    private static final Row[] ORDERS_FIRST = {
        Row.of(1L, "terry", "pen", 1000L),
        Row.of(4L, "bob", "apple", 4000L),
        Row.of(8L, "bill", "banana", 8000L)
    };

    /**
     * DeduplicateKeepFirstTestPrograms.UPDATING_INPUT, UNSEEN_RETRACTION_IGNORED and
     * UPDATING_EVENT_TIME_FAILS: an updating input. Flink 2.3 and 2.2 refuse it for every process
     * table function that does not declare it; BLOOM_DEDUP takes insert-only input.
     */
    @Test
    void updatingInputIsRefused() {
        DataStream<Row> changes =
                env.fromData(
                                Row.ofKind(RowKind.DELETE, "Vas", "logout"),
                                Row.ofKind(RowKind.INSERT, "Vas", "login"),
                                Row.ofKind(RowKind.UPDATE_BEFORE, "Vas", "login"),
                                Row.ofKind(RowKind.UPDATE_AFTER, "Vas", "click"))
                        .returns(
                                Types.ROW_NAMED(
                                        new String[] {"user_name", "action"},
                                        Types.STRING,
                                        Types.STRING));
        String name = "changes" + (++views);
        t.createTemporaryView(name, t.fromChangelogStream(changes));
        assertThatThrownBy(() -> t.explainSql(bloomDedup(name, "user_name", "*", "")))
                .hasMessageContaining(
                        "StreamPhysicalProcessTableFunction doesn't support consuming update and"
                                + " delete changes");
    }

    /**
     * DeduplicateKeepFirstTestPrograms.NEGATIVE_TTL_FAILS, NON_LITERAL_TTL_FAILS and
     * NON_LITERAL_RESET_FAILS: refused at planning, naming the argument (with on_time, so that the
     * refusal is about the argument and not about a retention without it).
     */
    @Test
    void badRetentionArgumentsAreRefusedAtPlanning() {
        String v = view(TIMED_EVENTS, Row.of("Vas", "login", Instant.ofEpochMilli(1000)));
        String[][] cases = {
            {"state_ttl => INTERVAL '-1' SECOND", "argument state_ttl must not be negative"},
            {"state_ttl => INTERVAL '1' SECOND * 2", "argument state_ttl must be"},
            {
                "state_ttl => INTERVAL '1' SECOND, reset_ttl_on_duplicate => 1 = 1",
                "argument reset_ttl_on_duplicate must be"
            },
        };
        for (String[] c : cases) {
            String query = bloomDedup(v, "user_name", "*", ", on_time => DESCRIPTOR(ts), " + c[0]);
            assertThatThrownBy(() -> t.explainSql(query))
                    .as(c[0])
                    .rootCause()
                    .hasMessageContaining(c[1]);
        }
    }

    // ---- Helpers ----

    /**
     * Whether every case also runs without exact mode ({@code
     * -Dbloomstream.keepFirstWithoutExact=true}, CONTRIBUTING.md); by default only the cases of the
     * event-time, NULL and several-column paths do ({@link #assertKeepFirstInBothModes}).
     */
    private static final boolean EVERY_CASE_WITHOUT_EXACT =
            Boolean.getBoolean("bloomstream.keepFirstWithoutExact");

    /**
     * Asserts that Flink's reference query gives {@code expected} (the port of the case is right),
     * then that BLOOM_DEDUP gives them, in any order.
     */
    private static void assertKeepFirst(String reference, String bloomDedup, Row... expected)
            throws Exception {
        assertThat(collect(reference)).as(reference).containsExactlyInAnyOrder(expected);
        assertThat(collect(bloomDedup)).as(bloomDedup).containsExactlyInAnyOrder(expected);
        if (EVERY_CASE_WITHOUT_EXACT) {
            assertWithoutExact(bloomDedup, expected);
        }
    }

    /** {@link #assertKeepFirst}, then the same call without exact mode. */
    private static void assertKeepFirstInBothModes(
            String reference, String bloomDedup, Row... expected) throws Exception {
        assertKeepFirst(reference, bloomDedup, expected);
        if (!EVERY_CASE_WITHOUT_EXACT) {
            assertWithoutExact(bloomDedup, expected);
        }
    }

    /**
     * Without exact mode only false positives may differ: a subset, missing at most one row (at
     * most 10 ids per case at fpp 0.01: P(two or more) < 5e-3; fixed seeds, so a given case gives
     * the same rows on every run).
     */
    private static void assertWithoutExact(String bloomDedup, Row... expected) throws Exception {
        String plain = bloomDedup.replace("exact => TRUE", "exact => FALSE");
        assertThat(collect(plain))
                .as(plain)
                .isSubsetOf(expected)
                .hasSizeGreaterThanOrEqualTo(expected.length - 1);
    }

    /** Flink's keep-first {@code ROW_NUMBER} query on view {@code v} (with {@code pt}). */
    private static String rowNumber(String v, String key, String columns, String order) {
        return "SELECT "
                + columns
                + " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
                + key
                + " ORDER BY "
                + order
                + ") AS rn FROM "
                + v
                + "_p) WHERE rn = 1";
    }

    private static String bloomDedup(String v, String id, String columns, String more) {
        return "SELECT "
                + columns
                + " FROM BLOOM_DEDUP(input => TABLE "
                + v
                + ", id_column => '"
                + id
                + "', expected_items => 100, fpp => 0.01, exact => TRUE"
                + more
                + ")";
    }

    private static List<Row> collect(String query) throws Exception {
        return SqlTesting.collect(t, query);
    }

    private static List<Row> rows(Table table) throws Exception {
        List<Row> out = new ArrayList<>();
        try (CloseableIterator<Row> it = table.execute().collect()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    /** A view of {@code v} with the id {@code expression} as its first column {@code k}. */
    private static String joinedIdView(String v, String expression) {
        String name = v + "_k";
        t.executeSql(
                "CREATE TEMPORARY VIEW "
                        + name
                        + " AS SELECT "
                        + expression
                        + " AS k, * FROM "
                        + v);
        return name;
    }

    /**
     * A view of {@code rows} with {@code columns} ("name TYPE, ..."; STRING, BIGINT or
     * TIMESTAMP_LTZ, the last an event-time column with Flink's watermark {@code ts - 10 s} after
     * every row), and beside it a view {@code <name>_p} with a processing-time column {@code pt}.
     */
    private static String view(String columns, Row... rows) {
        String[] parts = columns.split(",\\s*");
        String[] names = new String[parts.length];
        TypeInformation<?>[] types = new TypeInformation<?>[parts.length];
        Schema.Builder schema = Schema.newBuilder();
        int time = -1;
        for (int i = 0; i < parts.length; i++) {
            String[] nameType = parts[i].trim().split("\\s+");
            names[i] = nameType[0];
            DataType type;
            switch (nameType[1]) {
                case "STRING":
                    types[i] = Types.STRING;
                    type = DataTypes.STRING();
                    break;
                case "BIGINT":
                    types[i] = Types.LONG;
                    type = DataTypes.BIGINT();
                    break;
                case "TIMESTAMP_LTZ":
                    types[i] = Types.INSTANT;
                    type = DataTypes.TIMESTAMP_LTZ(3);
                    time = i;
                    break;
                default:
                    throw new IllegalArgumentException("type " + nameType[1]);
            }
            schema.column(names[i], type);
        }
        DataStream<Row> stream = env.fromData(Arrays.asList(rows), Types.ROW_NAMED(names, types));
        if (time >= 0) {
            int field = time;
            stream =
                    stream.assignTimestampsAndWatermarks(
                            WatermarkStrategy.<Row>forGenerator(c -> new EveryRow(10_000))
                                    .withTimestampAssigner(
                                            (r, ts) ->
                                                    ((Instant) r.getField(field)).toEpochMilli()));
            schema.watermark(names[time], "SOURCE_WATERMARK()");
        }
        String name = "events" + (++views);
        t.createTemporaryView(name, t.fromDataStream(stream, schema.build()));
        t.executeSql(
                "CREATE TEMPORARY VIEW " + name + "_p AS SELECT *, PROCTIME() AS pt FROM " + name);
        return name;
    }

    /**
     * DeduplicationTestPrograms' table: DATA1 then DATA2, with {@code event_time} computed from
     * {@code order_time} (seconds) and Flink's watermark {@code event_time - 5 s}, or with a
     * processing-time column {@code proctime}.
     */
    private static String orders(boolean proctime) {
        List<Row> rows =
                List.of(
                        Row.of(1L, "terry", "pen", 1000L),
                        Row.of(2L, "alice", "pen", 2000L),
                        Row.of(3L, "bob", "pen", 3000L),
                        Row.of(4L, "bob", "apple", 4000L),
                        Row.of(5L, "fish", "apple", 5000L),
                        Row.of(6L, "jerry", "pen", 6000L),
                        Row.of(7L, "larry", "apple", 7000L),
                        Row.of(8L, "bill", "banana", 8000L),
                        Row.of(9L, "carol", "apple", 9000L));
        Schema.Builder schema =
                Schema.newBuilder()
                        .column("order_id", DataTypes.BIGINT())
                        .column("user", DataTypes.STRING())
                        .column("product", DataTypes.STRING())
                        .column("order_time", DataTypes.BIGINT())
                        .columnByExpression(
                                "event_time", "TO_TIMESTAMP(FROM_UNIXTIME(order_time))");
        if (proctime) {
            schema.columnByExpression("proctime", "PROCTIME()");
        } else {
            schema.watermark("event_time", "event_time - INTERVAL '5' SECOND");
        }
        String name = "orders" + (++views);
        t.createTemporaryView(
                name,
                t.fromDataStream(
                        env.fromData(rows)
                                .returns(
                                        Types.ROW_NAMED(
                                                new String[] {
                                                    "order_id", "user", "product", "order_time"
                                                },
                                                Types.LONG,
                                                Types.STRING,
                                                Types.STRING,
                                                Types.LONG)),
                        schema.build()));
        return name;
    }

    /** The watermark {@code max event time - lag}, emitted after every row. */
    private static final class EveryRow implements WatermarkGenerator<Row> {
        private final long lag;
        private long max = Long.MIN_VALUE + 1;

        EveryRow(long lag) {
            this.lag = lag;
        }

        @Override
        public void onEvent(Row event, long timestamp, WatermarkOutput output) {
            max = Math.max(max, timestamp);
            output.emitWatermark(new Watermark(max - lag));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }
}
