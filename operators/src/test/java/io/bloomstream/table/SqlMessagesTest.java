package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a SQL user reads when a call is wrong, found by trying the functions as a new user would:
 * every message names the argument and says what to write instead, and planning fails with our
 * message rather than one of Flink's internals.
 */
class SqlMessagesTest {

    private static TableEnvironment env;

    @BeforeAll
    static void setUp() {
        env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        BloomFunctions.registerAll(env);
        SqlHarness.createClicks(env, Path.of("/nonexistent"), "");
        env.executeSql(
                "CREATE TEMPORARY TABLE ids (id STRING) WITH ('connector' = 'filesystem',"
                        + " 'format' = 'raw', 'path' = '/nonexistent')");
    }

    private static String messages(String sql) {
        Throwable t = catchThrowable(() -> env.explainSql(sql));
        assertThat(t).as(sql).isNotNull();
        StringBuilder messages = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            messages.append(c.getClass().getSimpleName()).append(": ");
            messages.append(c.getMessage()).append('\n');
        }
        return messages.toString();
    }

    @Test
    void aMissingRequiredArgumentOfBloomDedupIsNamed() {
        String m =
                messages(
                        "SELECT * FROM BLOOM_DEDUP(input => TABLE clicks PARTITION BY page,"
                                + " id_column => 'user', expected_items => 1000)");
        assertThat(m).contains("BLOOM_DEDUP").contains("fpp");
    }

    @Test
    void theThreeArgumentSignatureIsListed() {
        String m = messages("SELECT BLOOM_COUNT_DISTINCT(`user`, 100, 2.0) FROM clicks");
        assertThat(m).contains("fpp must be in (0, 1), was 2.0");
    }

    @Test
    void aDoubleFppSaysWhichLiteralToWrite() {
        String m =
                messages(
                        "SELECT * FROM BLOOM_DEDUP(input => TABLE clicks PARTITION BY page,"
                                + " id_column => 'user', expected_items => 1000, fpp => 1e-2)");
        assertThat(m).contains("argument fpp must be a DECIMAL literal: write 0.01");
        assertThat(
                        catchThrowable(
                                () ->
                                        env.explainSql(
                                                "SELECT * FROM BLOOM_DEDUP(input => TABLE clicks"
                                                        + " PARTITION BY page, id_column =>"
                                                        + " 'user', expected_items => 1000,"
                                                        + " fpp => 0.01)")))
                .isNull();
    }

    @Test
    void partitioningByTheIdColumnIsRefusedWithTheFix() {
        String m =
                messages(
                        "SELECT * FROM BLOOM_DEDUP(input => TABLE ids PARTITION BY id,"
                                + " id_column => 'id', expected_items => 1000, fpp => 0.01)");
        assertThat(m).contains("BLOOM_DEDUP").contains("PARTITION BY").doesNotContain("CodeGen");
    }

    @Test
    void validationErrorsAreValidationExceptions() {
        Throwable t =
                catchThrowable(
                        () ->
                                env.explainSql(
                                        "SELECT BLOOM_COUNT_DISTINCT(`user`, 100, 2.0) FROM"
                                                + " clicks"));
        assertThat(t).isInstanceOf(ValidationException.class);
    }
}
