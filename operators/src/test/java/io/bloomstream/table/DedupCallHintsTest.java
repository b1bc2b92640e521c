package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomstream.table.internal.DedupCallHints;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tests for {@link DedupCallHints}: the {@code BLOOM_DEDUP} calls that Calcite refuses before the
 * function sees them, naming no argument, are explained from their text, naming it. Each call is
 * planned first, so that the test also pins Calcite's message on this Flink line.
 */
class DedupCallHintsTest {

    private static TableEnvironment t;

    @BeforeAll
    static void setUp() {
        t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        BloomFunctions.registerAll(t);
        t.executeSql(
                "CREATE TEMPORARY TABLE events (k STRING, id STRING, n BIGINT,"
                        + " ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts)"
                        + " WITH ('connector' = 'datagen')");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // a misspelt or missing table argument: a table argument cannot be optional
                "inpt => TABLE events PARTITION BY k, id_column => 'id', expected_items => 10,"
                        + " fpp => 0.01"
                        + " | DEFAULT is only allowed for optional parameters"
                        + " | BLOOM_DEDUP: unknown argument inpt (did you mean input?); the"
                        + " arguments are input, id_column, expected_items, fpp, retention,"
                        + " generations, shards, state_ttl, reset_ttl_on_duplicate, exact, first_by,"
                        + " on_time, uid",
                "id_column => 'id', expected_items => 10, fpp => 0.01"
                        + " | DEFAULT is only allowed for optional parameters"
                        + " | BLOOM_DEDUP: argument input is required: the table, like input =>"
                        + " TABLE events PARTITION BY user_id",
                // a literal Calcite's routine lookup cannot assign to the declared type
                "input => TABLE events PARTITION BY k, id_column => 'id', expected_items => 10,"
                        + " fpp => 0.01, exact => 'yes'"
                        + " | No match found for function signature BLOOM_DEDUP"
                        + " | BLOOM_DEDUP: argument exact must be a BOOLEAN literal (TRUE or"
                        + " FALSE), was 'yes'",
                "input => TABLE events PARTITION BY k, id_column => 'id',"
                        + " expected_items => 10000000000, fpp => 0.01"
                        + " | No match found for function signature BLOOM_DEDUP"
                        + " | BLOOM_DEDUP: argument expected_items must be an INT literal, was"
                        + " 10000000000",
                "input => TABLE events PARTITION BY k, id_column => 'id', expected_items => 1.5,"
                        + " fpp => 0.01"
                        + " | No match found for function signature BLOOM_DEDUP"
                        + " | BLOOM_DEDUP: argument expected_items must be an INT literal, was"
                        + " 1.5",
                "input => TABLE events PARTITION BY k, id_column => 'id', expected_items => 10,"
                        + " fpp => 0.01, retention => INTERVAL '1' YEAR, on_time => DESCRIPTOR(ts)"
                        + " | No match found for function signature BLOOM_DEDUP"
                        + " | BLOOM_DEDUP: argument retention must be a day-time INTERVAL"
                        + " literal like INTERVAL '1' DAY, was INTERVAL '1' YEAR",
            })
    void aCallCalciteRefusesIsExplainedNamingTheArgument(String args, String calcite, String hint) {
        String sql = "SELECT * FROM BLOOM_DEDUP(" + args + ")";
        Throwable e = catchThrowable(() -> t.explainSql(sql));
        assertThat(e).isInstanceOf(ValidationException.class);
        String message = BloomDedupArgumentsTest.messages(e);
        assertThat(message).contains(calcite);
        assertThat(DedupCallHints.explain(sql, message)).hasValue(hint.strip());
    }

    @Test
    void otherErrorsAndGoodCallsGetNoHint() {
        String good =
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events, id_column => 'id',"
                        + " expected_items => 10, fpp => 0.01)";
        assertThat(DedupCallHints.explain(good, "Object 'x' not found")).isEmpty();
        assertThat(DedupCallHints.explain(good, "DEFAULT is only allowed for optional parameters"))
                .as("a call with nothing wrong in its text")
                .isEmpty();
        // quotes, nested calls and two calls: the second one is wrong
        String two =
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events, id_column => 'a,(b',"
                        + " expected_items => CAST(10 AS INT), fpp => 0.01) JOIN"
                        + " bloom_dedup(input => TABLE events, id_column => 'id',"
                        + " expected_items => 10, fpp => 0.01, exact => 1)";
        assertThat(
                        DedupCallHints.explain(
                                two, "No match found for function signature BLOOM_DEDUP(<x>)"))
                .hasValue(
                        "BLOOM_DEDUP: argument exact must be a BOOLEAN literal (TRUE or FALSE),"
                                + " was 1");
    }
}
