package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        StringBuilder messages = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            messages.append(c.getMessage()).append('\n');
        }
        assertThat(messages.toString()).contains(message);
    }
}
