package io.bloomstream.table;

import static org.apache.flink.table.api.Expressions.$;
import static org.apache.flink.table.api.Expressions.call;
import static org.apache.flink.table.api.Expressions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad arguments fail when the query is planned (no job runs), with a message naming the argument:
 * literals out of range, NULL literals where a value is needed, and arguments of another type.
 */
class BloomPlanningErrorsTest {

    private static TableEnvironment env;

    @BeforeAll
    static void setUp() {
        env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        BloomFunctions.registerAll(env);
        SqlHarness.createClicks(env, Path.of("/nonexistent"), "");
        env.executeSql(
                "CREATE TEMPORARY VIEW latest AS"
                        + " SELECT `user`, LAST_VALUE(page) AS page FROM clicks GROUP BY `user`");
        env.executeSql(
                "CREATE TEMPORARY VIEW filters AS SELECT page, BLOOM_BUILD(`user`, 1000, 0.01)"
                        + " AS f FROM clicks GROUP BY page");
    }

    @ParameterizedTest
    @CsvSource(
            delimiterString = " => ",
            value = {
                "BLOOM_COUNT_DISTINCT(`user`, 1000, 1.5)"
                        + " => BLOOM_COUNT_DISTINCT: fpp must be in (0, 1), was 1.5",
                "BLOOM_COUNT_DISTINCT(`user`, 1000, 0)"
                        + " => BLOOM_COUNT_DISTINCT: fpp must be in (0, 1), was 0.0",
                "BLOOM_COUNT_DISTINCT(`user`, 1000, -0.1E0)"
                        + " => BLOOM_COUNT_DISTINCT: fpp must be in (0, 1), was -0.1",
                "BLOOM_COUNT_DISTINCT(`user`, 0, 0.01)"
                        + " => BLOOM_COUNT_DISTINCT: expected_items must be positive, was 0",
                "BLOOM_COUNT_DISTINCT(`user`, -5)"
                        + " => BLOOM_COUNT_DISTINCT: expected_items must be positive, was -5",
                "BLOOM_COUNT_DISTINCT(`user`, 1000000000000000, 0.000001)"
                        + " => BLOOM_COUNT_DISTINCT: no filter for expected_items=1000000000000000",
                "BLOOM_COUNT_DISTINCT(`user`, 'many', 0.01)"
                        + " => argument 'expected_items' must be an integer",
                "BLOOM_COUNT_DISTINCT(`user`, 1000.5, 0.01)"
                        + " => argument 'expected_items' must be an integer",
                "BLOOM_COUNT_DISTINCT(`user`, 1000, 'low')"
                        + " => argument 'fpp' must be a number in (0, 1), was",
                // an untyped NULL is refused by the SQL validator before the function sees it; a
                // typed NULL (CAST(NULL AS BIGINT)) is not a literal: refused on the first row
                "BLOOM_COUNT_DISTINCT(`user`, 1000, NULL)"
                        + " => From line 1, column 43 to line 1, column 46: Illegal use of 'NULL'",
                "BLOOM_COUNT_DISTINCT(`user`, 1000, 0.01, NULL)"
                        + " => From line 1, column 49 to line 1, column 52: Illegal use of 'NULL'",
                "BLOOM_COUNT_DISTINCT(ts > 0) => argument 'value' must be a STRING, an integer",
                "BLOOM_COUNT_DISTINCT(CAST(ts AS DOUBLE)) => argument 'value' must be a STRING",
                "BLOOM_BUILD(`user`, 1000, 2) => BLOOM_BUILD: fpp must be in (0, 1), was 2.0",
                "BLOOM_BUILD(`user`)"
                        + " => BLOOM_BUILD(value STRING | BIGINT | BYTES, expected_items BIGINT, fpp"
                        + " DOUBLE)",
                "BLOOM_UNION(`user`) => BLOOM_UNION: argument 'filter' must be BYTES",
                "BLOOM_ESTIMATE(ts) => BLOOM_ESTIMATE: argument 'filter' must be BYTES",
                "BLOOM_MIGHT_CONTAIN(ts, `user`) => BLOOM_MIGHT_CONTAIN: argument 'filter' must be",
                "BLOOM_MIGHT_CONTAIN(`user`, `user`)"
                        + " => BLOOM_MIGHT_CONTAIN: argument 'filter', a path, must be a string"
                        + " literal",
                "BLOOM_MIGHT_CONTAIN(CONCAT('/lists/', `user`), `user`)"
                        + " => BLOOM_MIGHT_CONTAIN: argument 'filter', a path, must be a string"
                        + " literal",
                "BLOOM_MIGHT_CONTAIN('f.bloom', ts > 0)"
                        + " => BLOOM_MIGHT_CONTAIN: argument 'value' must be"
            })
    void badArgumentFailsAtPlanningNamingIt(String call, String message) {
        Throwable t = catchThrowable(() -> env.explainSql("SELECT " + call + " FROM clicks"));
        assertThat(t).isInstanceOf(ValidationException.class);
        assertThat(messages(t)).contains(message);
    }

    private static String messages(Throwable t) {
        StringBuilder messages = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            messages.append(c.getMessage()).append('\n');
        }
        return messages.toString();
    }

    /**
     * On an updating input (the {@code latest} view: each user's last page, a GROUP BY's result)
     * the aggregates without {@code retract} are refused when the query is planned, by Flink,
     * naming the function: the plain BLOOM_COUNT_DISTINCT (the counting form takes retractions),
     * BLOOM_BUILD (bits cannot forget a value) and BLOOM_UNION (a union cannot subtract a filter).
     */
    @ParameterizedTest
    @CsvSource(
            delimiterString = " => ",
            value = {
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01) FROM latest GROUP BY page"
                        + " => BLOOM_COUNT_DISTINCT",
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`) FROM latest GROUP BY page"
                        + " => BLOOM_COUNT_DISTINCT",
                "SELECT page, BLOOM_BUILD(`user`, 10000, 0.01) FROM latest GROUP BY page"
                        + " => BLOOM_BUILD",
                "SELECT BLOOM_UNION(f) FROM filters => BLOOM_UNION"
            })
    void aggregateWithoutRetractIsRefusedOnUpdatingInput(String query, String function) {
        Throwable t = catchThrowable(() -> env.explainSql(query));
        assertThat(t).isInstanceOf(ValidationException.class);
        assertThat(messages(t))
                .contains("Could not find an implementation method 'retract'")
                .contains(function);
    }

    /** The counting form plans on the same updating input. */
    @Test
    void countingFormPlansOnUpdatingInput() {
        assertThat(
                        env.explainSql(
                                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, 'retract'),"
                                        + " COUNT(DISTINCT `user`) FROM latest GROUP BY page"))
                .contains("GroupAggregate");
    }

    /**
     * The mode is the literal 'retract' (any case): anything else fails naming argument 'mode', on
     * insert-only and on updating input. (An untyped NULL is refused by the SQL validator first, as
     * for fpp above.)
     */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "'retrac'",
                "'plain'",
                "''",
                "page",
                "UPPER('retract')",
                "CAST(NULL AS STRING)",
                "42"
            })
    void badModeFailsAtPlanningNamingIt(String mode) {
        for (String from : new String[] {"clicks", "latest"}) {
            Throwable t =
                    catchThrowable(
                            () ->
                                    env.explainSql(
                                            "SELECT BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, "
                                                    + mode
                                                    + ") FROM "
                                                    + from));
            assertThat(t).as(mode + " on " + from).isInstanceOf(ValidationException.class);
            assertThat(messages(t))
                    .as(mode + " on " + from)
                    .contains("BLOOM_COUNT_DISTINCT: argument 'mode' must be");
        }
    }

    /** The Table API takes the mode as a literal too, and refuses another. */
    @Test
    void tableApiModeIsCheckedAtPlanning() {
        Table latest = env.from("latest");
        String plan =
                latest.groupBy($("page"))
                        .select(
                                $("page"),
                                call(
                                        CountDistinctAggFunction.class,
                                        $("user"),
                                        lit(10_000L),
                                        lit(0.01),
                                        lit("retract")))
                        .explain();
        assertThat(plan).contains("GroupAggregate");
        Throwable t =
                catchThrowable(
                        () ->
                                latest.groupBy($("page"))
                                        .select(
                                                $("page"),
                                                call(
                                                        CountDistinctAggFunction.class,
                                                        $("user"),
                                                        lit(10_000L),
                                                        lit(0.01),
                                                        $("page")))
                                        .explain());
        assertThat(t).isInstanceOf(ValidationException.class);
        assertThat(messages(t)).contains("BLOOM_COUNT_DISTINCT: argument 'mode' must be");
    }

    /**
     * The literal is matched in any case, blanks around it ignored; the counting form plans on
     * insert-only input too.
     */
    @ParameterizedTest
    @ValueSource(strings = {"'retract'", "'RETRACT'", "' Retract '"})
    void modeLiteralInAnyCasePlans(String mode) {
        for (String from : new String[] {"clicks", "latest"}) {
            assertThat(
                            env.explainSql(
                                    "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, "
                                            + mode
                                            + ") FROM "
                                            + from
                                            + " GROUP BY page"))
                    .as(mode + " on " + from)
                    .contains("GroupAggregate");
        }
    }
}
