package io.bloomstream.jobs.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Tests for {@link SqlScript}. */
class SqlScriptTest {

    private static List<String> texts(String script) {
        return SqlScript.split(script).stream()
                .map(SqlScript.Statement::text)
                .collect(Collectors.toList());
    }

    @Test
    void cutsAtEachSemicolonAndKeepsALastStatementWithoutOne() {
        assertThat(texts("SELECT 1; SELECT 2;\nSELECT 3"))
                .containsExactly("SELECT 1", "SELECT 2", "SELECT 3");
    }

    @Test
    void semicolonsInLiteralsQuotedIdentifiersAndCommentsDoNotCut() {
        String script =
                "SELECT 'a;b', 'it''s;', `c;``d`, \"e;f\" -- g; 'h\n"
                        + "  /* i; 'j */ FROM t /*+ OPTIONS('k'=';') */;\n"
                        + "SELECT '--;', '/*;'";
        assertThat(texts(script))
                .containsExactly(
                        "SELECT 'a;b', 'it''s;', `c;``d`, \"e;f\" -- g; 'h\n"
                                + "  /* i; 'j */ FROM t /*+ OPTIONS('k'=';') */",
                        "SELECT '--;', '/*;'");
    }

    @Test
    void commentsAndBlanksAloneAreNoStatement() {
        assertThat(texts("-- only;\n/* a; */ ;; \n  -- comment")).isEmpty();
        assertThat(texts("")).isEmpty();
    }

    @Test
    void aStatementStartsAtItsFirstCharacterAfterCommentsWithItsLineAndColumn() {
        List<SqlScript.Statement> statements =
                SqlScript.split("-- head\n/* x */  SELECT 1;\n\n   SELECT\n 2 ;");
        assertThat(statements).hasSize(2);
        assertThat(statements.get(0)).isEqualTo(new SqlScript.Statement("SELECT 1", 2, 10));
        assertThat(statements.get(1)).isEqualTo(new SqlScript.Statement("SELECT\n 2", 4, 4));
        assertThat(statements.get(1).firstLine()).isEqualTo("SELECT");
        assertThat(statements.get(1).padded()).isEqualTo("\n\n\n   SELECT\n 2");
    }

    @Test
    void aStatementSetIsOneStatementUntilItsEnd() {
        String script =
                "EXECUTE STATEMENT SET\nBEGIN\n INSERT INTO a SELECT ';';\n"
                        + " -- END;\n INSERT INTO b SELECT 'END';\nEND;\nSELECT 1";
        assertThat(texts(script))
                .containsExactly(
                        "EXECUTE STATEMENT SET\nBEGIN\n INSERT INTO a SELECT ';';\n"
                                + " -- END;\n INSERT INTO b SELECT 'END';\nEND",
                        "SELECT 1");
    }

    @Test
    void keywordsInsideLiteralsDoNotOpenAStatementSet() {
        assertThat(texts("SELECT 'statement set begin'; SELECT 2"))
                .containsExactly("SELECT 'statement set begin'", "SELECT 2");
    }

    @Test
    void anUnterminatedLiteralRunsToTheEndForTheParserToReport() {
        assertThat(texts("SELECT 1; SELECT 'open; SELECT 2"))
                .containsExactly("SELECT 1", "SELECT 'open; SELECT 2");
    }
}
