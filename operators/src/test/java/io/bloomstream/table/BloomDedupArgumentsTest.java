package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.internal.Shards;
import io.bloomstream.table.internal.DedupArguments;
import java.math.BigDecimal;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tests that bad arguments of {@link DedupTableFunction} and {@link ShardScalarFunction} fail at
 * planning time with a message naming the argument (the queries are only planned, never run).
 */
class BloomDedupArgumentsTest {

    private static TableEnvironment t;

    @BeforeAll
    static void setUp() {
        t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        BloomFunctions.registerAll(t);
        t.executeSql(
                "CREATE TEMPORARY TABLE events (k STRING, id STRING, n BIGINT, x DOUBLE,"
                        + " ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts)"
                        + " WITH ('connector' = 'datagen')");
    }

    private static String dedup(String args) {
        return "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k, " + args + ")";
    }

    @Test
    void plansAGoodCall() {
        String plan =
                t.explainSql(
                        dedup(
                                "id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                        + " retention => INTERVAL '1' DAY,"
                                        + " generations => 3, on_time => DESCRIPTOR(ts),"
                                        + " uid => 'dedup'"));
        assertThat(plan).contains("BLOOM_DEDUP");
        // Flink's names; a state_ttl of zero is no retention, as in Flink.
        t.explainSql(
                dedup(
                        "id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                + " state_ttl => INTERVAL '1' DAY,"
                                + " reset_ttl_on_duplicate => FALSE, on_time => DESCRIPTOR(ts)"));
        t.explainSql(
                dedup(
                        "id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                + " state_ttl => INTERVAL '0' SECOND"));
        // Flink's: zero with a reset is no retention; a TTL without on_time is on processing
        // time; several id columns; the first to arrive by its name.
        t.explainSql(
                dedup(
                        "id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                + " state_ttl => INTERVAL '0' SECOND,"
                                + " reset_ttl_on_duplicate => TRUE"));
        t.explainSql(
                dedup(
                        "id_column => 'id, n', expected_items => 1000, fpp => 0.01,"
                                + " state_ttl => INTERVAL '1' HOUR"));
        t.explainSql(
                dedup(
                        "id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                + " retention => INTERVAL '1' HOUR, on_time => DESCRIPTOR(ts),"
                                + " first_by => 'arrival'"));
        assertThat(
                        t.sqlQuery(dedup("id_column => 'n', expected_items => 10, fpp => 0.5"))
                                .getResolvedSchema()
                                .getColumnNames())
                .containsExactly("k", "id", "n", "x", "ts");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "id_column => 'id', expected_items => 1000, fpp => 1.5 | argument fpp | 1.5",
                "id_column => 'id', expected_items => 1000, fpp => 0.0 | argument fpp | 0",
                // the DOUBLE as its literal is written, not as the DECIMAL the message asks for
                "id_column => 'id', expected_items => 1000, fpp => 1e-2"
                        + " | argument fpp must be a DECIMAL literal: write 0.01"
                        + " | was the DOUBLE 1E-2",
                "id_column => 'id', expected_items => 1000, fpp => 1.5e0"
                        + " | argument fpp must be a DECIMAL literal: write 1.5"
                        + " | was the DOUBLE 1.5E0",
                // a missing id_column is named (Calcite said only "DEFAULT is only allowed for
                // optional parameters" while it was declared required)
                "expected_items => 1000, fpp => 0.01 | argument id_column is required | missing",
                "id_column => CAST(NULL AS STRING), expected_items => 1000, fpp => 0.01"
                        + " | argument id_column is required | NULL",
                "id_column => 'id', expected_items => 0, fpp => 0.01 | argument expected_items | 0",
                "id_column => 'id', expected_items => -5, fpp => 0.01"
                        + " | argument expected_items | -5",
                // Types Flink cannot cast to the declared one fail before the function's checks,
                // with the expected signature, which names each argument and its type.
                "id_column => 'id', expected_items => 10000000000, fpp => 0.01"
                        + " | expected_items => INT | No match found",
                "id_column => 'id', expected_items => 1.5, fpp => 0.01"
                        + " | expected_items => INT | No match found",
                "id_column => 'nope', expected_items => 10, fpp => 0.01 | argument id_column | nope",
                "id_column => 'x', expected_items => 10, fpp => 0.01 | argument id_column | DOUBLE",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " first_by => 'EVENT_TIME' | argument first_by 'EVENT_TIME' needs"
                        + " on_time | 'EVENT_TIME'",
                "id_column => 'id', expected_items => 10, fpp => 0.01, on_time => DESCRIPTOR(ts),"
                        + " first_by => 'LAST' | argument first_by must be 'EVENT_TIME' or"
                        + " 'ARRIVAL' | 'LAST'",
                "id_column => 'id, nope', expected_items => 10, fpp => 0.01"
                        + " | argument id_column must name a column | 'nope' is not",
                "id_column => 'id,id', expected_items => 10, fpp => 0.01"
                        + " | argument id_column names column 'id' twice | 'id,id'",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " retention => INTERVAL '0' SECOND, on_time => DESCRIPTOR(ts)"
                        + " | argument retention | PT0S",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " retention => INTERVAL '1' YEAR, on_time => DESCRIPTOR(ts)"
                        + " | retention => INTERVAL | No match found",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " retention => INTERVAL '1' DAY, on_time => DESCRIPTOR(ts),"
                        + " generations => 1 | argument generations | 1",
                // Flink's names (DEDUPLICATE_KEEP_FIRST's)
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " retention => INTERVAL '1' DAY, state_ttl => INTERVAL '1' HOUR,"
                        + " on_time => DESCRIPTOR(ts)"
                        + " | arguments retention and state_ttl both name the retention"
                        + " | retention => PT24H, state_ttl => PT1H",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " reset_ttl_on_duplicate => TRUE"
                        + " | argument reset_ttl_on_duplicate needs a retention | true",
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " state_ttl => INTERVAL '1' HOUR, reset_ttl_on_duplicate => 'yes',"
                        + " on_time => DESCRIPTOR(ts)"
                        + " | reset_ttl_on_duplicate => BOOLEAN | No match found",
            })
    void badArgumentFailsAtPlanningNamingIt(String args, String argument, String value) {
        assertThatThrownBy(() -> t.explainSql(dedup(args)))
                .isInstanceOf(ValidationException.class)
                .satisfies(e -> assertThat(messages(e)).contains(argument).contains(value));
    }

    @Test
    void withShardsExpectedItemsCountsTheWholeInputAndEachShardIsSizedForItsShare() {
        assertThat(
                        t.sqlQuery(
                                        dedup(
                                                "id_column => 'id', expected_items => 1000000,"
                                                        + " fpp => 0.01, shards => 1024"))
                                .getResolvedSchema()
                                .getColumnNames())
                .containsExactly("k", "id", "n", "x", "ts");
        // 10^6 ids over 1024 shards: 977 per shard on average, plus 4 standard deviations.
        assertThat(
                        DedupArguments.config(
                                        1_000_000,
                                        1024,
                                        new BigDecimal("0.01"),
                                        null,
                                        null,
                                        null,
                                        null,
                                        null,
                                        true)
                                .expectedItems())
                .isEqualTo(Shards.itemsPerShard(1_000_000, 1024))
                .isEqualTo(1103);
        assertThat(
                        DedupArguments.config(
                                        1_000_000,
                                        null,
                                        new BigDecimal("0.01"),
                                        null,
                                        null,
                                        null,
                                        null,
                                        null,
                                        true)
                                .expectedItems())
                .isEqualTo(1_000_000);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "id_column => 'id', expected_items => 1000, fpp => 0.01, shards => 0"
                        + " | argument shards must be a positive INT | 0",
                "id_column => 'id', expected_items => 1000, fpp => 0.01, shards => -4"
                        + " | argument shards must be a positive INT | -4",
                "id_column => 'id', expected_items => 1000, fpp => 0.01, shards => 'x'"
                        + " | shards | CHAR",
            })
    void badShardsFailAtPlanningNamingIt(String args, String message, String value) {
        assertThatThrownBy(() -> t.explainSql(dedup(args)))
                .isInstanceOf(ValidationException.class)
                .satisfies(e -> assertThat(messages(e)).contains(message).contains(value));
    }

    @Test
    void shardsWithoutPartitionByAreRefused() {
        assertThatThrownBy(
                        () ->
                                t.explainSql(
                                        "SELECT * FROM BLOOM_DEDUP(input => TABLE events,"
                                                + " id_column => 'id', expected_items => 1000,"
                                                + " fpp => 0.01, shards => 16)"))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains("argument shards needs PARTITION BY"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // Calcite drops a name no parameter has before the function sees the call: the
                // interval was ignored, and every id remembered for ever.
                "id_column => 'id', expected_items => 10, fpp => 0.01,"
                        + " retention_typo => INTERVAL '1' HOUR, on_time => DESCRIPTOR(ts)"
                        + " | retention_typo",
                "id_column => 'id', expected_item => 10, fpp => 0.01 | expected_item",
                // a misspelt required argument: Calcite refused the call before the function saw it
                "id_colum => 'id', expected_items => 10, fpp => 0.01 | id_colum",
                "id_column => 'id', expected_items => 10, fpp => 0.01, fpp => 0.02 | fpp",
            })
    void unknownArgumentNameFailsAtPlanningNamingItAndTheKnownOnes(String args, String name) {
        assertThatThrownBy(() -> t.explainSql(dedup(args)))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .containsPattern(
                                                "BLOOM_DEDUP: (unknown )?argument " + name + "[; ]")
                                        .containsPattern(
                                                "unknown argument "
                                                        + name
                                                        + "( \\(did you mean [a-z_]+\\?\\))?"
                                                        + "; the arguments are input, id_column,"
                                                        + " expected_items, fpp, retention, .*"
                                                        + "on_time, uid"
                                                        + "|argument "
                                                        + name
                                                        + " is given twice"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {"id", "k, id", "id, k"})
    void partitioningByTheIdColumnIsRefusedWithTheRewrite(String keys) {
        // One filter per id: about 60 bytes of state per id, more than the exact ROW_NUMBER
        // dedup it would replace; it planned and ran, silently worse.
        String query =
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY ("
                        + keys
                        + "), id_column => 'id', expected_items => 10, fpp => 0.01)";
        assertThatThrownBy(() -> t.explainSql(query))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains(
                                                "BLOOM_DEDUP: the input is partitioned by its id"
                                                        + " column 'id'")
                                        .contains("BLOOM_SHARD(id)")
                                        .contains("without PARTITION BY"));
    }

    @Test
    void exactIsABooleanArgumentWithItsOwnNameChecks() {
        t.explainSql(dedup("id_column => 'id', expected_items => 10, fpp => 0.01, exact => TRUE"));
        assertThat(
                        DedupArguments.config(
                                        10,
                                        null,
                                        new BigDecimal("0.01"),
                                        null,
                                        null,
                                        null,
                                        null,
                                        true,
                                        true)
                                .exact())
                .isTrue();
        assertThat(
                        DedupArguments.config(
                                        10,
                                        null,
                                        new BigDecimal("0.01"),
                                        null,
                                        null,
                                        null,
                                        null,
                                        null,
                                        true)
                                .exact())
                .isFalse();
        t.explainSql(
                dedup(
                        "id_column => 'n', expected_items => 10, fpp => 0.3, exact => FALSE,"
                                + " state_ttl => INTERVAL '1' HOUR, on_time => DESCRIPTOR(ts)"));
        assertThatThrownBy(
                        () ->
                                t.explainSql(
                                        dedup(
                                                "id_column => 'id', expected_items => 10,"
                                                        + " fpp => 0.01, exakt => TRUE")))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains("unknown argument exakt (did you mean exact?)")
                                        .contains(
                                                "reset_ttl_on_duplicate, exact, first_by, on_time, uid"));
        assertThatThrownBy(
                        () ->
                                t.explainSql(
                                        dedup(
                                                "id_column => 'id', expected_items => 10,"
                                                        + " fpp => 0.01, exact => 'yes'")))
                .isInstanceOf(ValidationException.class)
                .satisfies(e -> assertThat(messages(e)).contains("exact => BOOLEAN"));
    }

    @Test
    void aMisspeltNameSuggestsTheKnownOne() {
        assertThatThrownBy(
                        () ->
                                t.explainSql(
                                        dedup(
                                                "id_column => 'id', expected_items => 10,"
                                                        + " fpp => 0.01, state_tll => INTERVAL"
                                                        + " '1' HOUR, on_time => DESCRIPTOR(ts)")))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains(
                                                "unknown argument state_tll (did you mean"
                                                        + " state_ttl?)"));
        assertThatThrownBy(
                        () ->
                                t.explainSql(
                                        dedup(
                                                "id_colum => 'id', expected_items => 10,"
                                                        + " fpp => 0.01")))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains(
                                                "BLOOM_DEDUP: unknown argument id_colum (did you"
                                                        + " mean id_column?)"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "SELECT BLOOM_SHARD(`value` => id, shards => 4) FROM events",
                "SELECT BLOOM_SHARD(`value` => id, shardz => 4) FROM events",
                "SELECT BLOOM_COUNT_DISTINCT(`value` => id, expected_items => 10) FROM events",
                "SELECT BLOOM_BUILD(`value` => id, expected_items => 10, fpp => 0.01) FROM events",
                "SELECT BLOOM_ESTIMATE(`filter` => CAST(NULL AS BYTES)) FROM events",
                "SELECT BLOOM_MIGHT_CONTAIN(`filter` => 'f.bloom', `value` => id) FROM events",
                "SELECT BLOOM_UNION(`filter` => CAST(NULL AS BYTES)) FROM events",
            })
    void theOtherFunctionsRefuseNamedArgumentsAtPlanning(String query) {
        // They take positional arguments only; Flink refuses a named call before the function's
        // checks (TypeInferenceOperandChecker#paramNames), so no name is ever ignored.
        assertThatThrownBy(() -> t.explainSql(query))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains(
                                                "Function must not be overloaded or use varargs"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "BLOOM_SHARD(id, 0) | shards | 0",
                "BLOOM_SHARD(id, -3) | shards | -3",
                "BLOOM_SHARD(x) | value | DOUBLE",
                "BLOOM_SHARD(id, 'a') | shards | CHAR",
            })
    void badShardArgumentFailsAtPlanningNamingIt(String call, String argument, String value) {
        assertThatThrownBy(() -> t.explainSql("SELECT " + call + " FROM events"))
                .isInstanceOf(ValidationException.class)
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .contains("argument " + argument)
                                        .contains(value));
    }

    /** The messages of a throwable and its causes. */
    static String messages(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause()) {
            sb.append(c.getMessage()).append('\n');
        }
        return sb.toString();
    }
}
