package io.bloomstream.jobs.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.table.BloomFunctions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.table.functions.ScalarFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code sql} command on the embedded mini-cluster: scripts from a file and from {@code -e},
 * the printed form of query results, INSERT into a file system sink, DDL, comments and {@code ;}
 * inside literals, and a failing statement.
 */
class SqlCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    private static String clicksTable() {
        return "CREATE TABLE clicks (ts BIGINT, `user` STRING, page STRING) WITH ("
                + " 'connector' = 'filesystem', 'format' = 'json', 'path' = '"
                + Cli.testdata().resolve("count/clicks.jsonl").toUri()
                + "');\n";
    }

    private List<String> out() {
        return cli.out.toString().lines().collect(Collectors.toList());
    }

    @Test
    void fileScriptPrintsTheFinalResultOfAnUpdatingQuery() throws Exception {
        Path script = tmp.resolve("distinct-users.sql");
        Files.writeString(
                script,
                "-- distinct users per page, against the recorded truth\n"
                        + clicksTable()
                        + "SELECT page, COUNT(DISTINCT `user`) FROM clicks GROUP BY page;\n");
        assertThat(cli.run("sql", "-f", script.toString())).as(cli.err.toString()).isZero();
        // The query's changelog updates each page's count many times; the final result is the
        // recorded truth, one line a page, sorted (by page text here).
        List<String> truth =
                Files.readAllLines(Cli.testdata().resolve("count/clicks.truth.csv")).stream()
                        .skip(1)
                        .map(l -> l.replace(',', '\t'))
                        .collect(Collectors.toList());
        assertThat(out()).containsExactlyElementsOf(truth);
    }

    @Test
    void executeOptionPrintsEachQueryOnLinesSortedWithNullAndTabsEscaped() {
        int status =
                cli.run(
                        "sql",
                        "-e",
                        "SELECT 'a' AS s, 1 AS n; "
                                + "VALUES (10, 'x' || CHR(9) || 'y\\'), (2, CAST(NULL AS STRING)),"
                                + " (CAST(NULL AS INT), 'first'), (2, 'a'), (2, 'a');"
                                + "SELECT TRUE, CAST(1.5 AS DOUBLE), DATE '2026-11-23',"
                                + " TIMESTAMP '2026-11-23 10:15:30.5', X'0A1B'");
        assertThat(status).as(cli.err.toString()).isZero();
        // NULL as \N and first; numbers by value (2 before 10); equal rows kept; a tab and a
        // backslash escaped; values as Flink's SQL client renders them.
        assertThat(out())
                .containsExactly(
                        "a\t1",
                        "\\N\tfirst",
                        "2\t\\N",
                        "2\ta",
                        "2\ta",
                        "10\tx\\ty\\\\",
                        "TRUE\t1.5\t2026-11-23\t2026-11-23 10:15:30.5\tx'0a1b'");
    }

    @Test
    void insertWritesToAFileSystemSinkAndWaitsForItsJob() throws Exception {
        Path sink = tmp.resolve("first-ids");
        Path script = tmp.resolve("insert.sql");
        Files.writeString(
                script,
                "CREATE TABLE ids (id STRING) WITH ('connector' = 'filesystem', 'format' = 'raw',"
                        + " 'path' = '"
                        + Cli.testdata().resolve("dedup/ids.txt").toUri()
                        + "');\n"
                        + "CREATE TABLE picked (id STRING, n INT) WITH ('connector' ="
                        + " 'filesystem', 'format' = 'csv', 'path' = '"
                        + sink.toUri()
                        + "');\n"
                        + "INSERT INTO picked SELECT id, CHAR_LENGTH(id) FROM ids"
                        + " WHERE id LIKE 'evt-01%';\n"
                        // reads what the INSERT wrote: it ran to the end before this started
                        + "SELECT COUNT(*), COUNT(DISTINCT id) FROM picked;\n");
        assertThat(cli.run("sql", "-f", script.toString(), "--parallelism", "1"))
                .as(cli.err.toString())
                .isZero();
        List<String> ids = Files.readAllLines(Cli.testdata().resolve("dedup/ids.txt"));
        List<String> expected =
                ids.stream()
                        .filter(id -> id.startsWith("evt-01"))
                        .map(id -> id + "," + id.length())
                        .collect(Collectors.toList());
        List<String> written;
        try (var files = Files.walk(sink)) {
            written =
                    files.filter(Files::isRegularFile)
                            .filter(f -> !f.getFileName().toString().startsWith("."))
                            .flatMap(SqlCommandTest::lines)
                            .collect(Collectors.toList());
        }
        assertThat(expected).isNotEmpty();
        assertThat(written).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(out()).containsExactly(expected.size() + "\t" + new HashSet<>(expected).size());
    }

    @Test
    void statementSetRunsItsInsertsAsOneJob() throws Exception {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        String script =
                "CREATE TABLE a (x INT) WITH ('connector' = 'filesystem', 'format' = 'csv',"
                        + " 'path' = '"
                        + a.toUri()
                        + "');\n"
                        + "CREATE TABLE b (x INT) WITH ('connector' = 'filesystem', 'format' ="
                        + " 'json', 'path' = '"
                        + b.toUri()
                        + "');\n"
                        + "EXECUTE STATEMENT SET BEGIN\n"
                        + "  INSERT INTO a VALUES (1), (2);\n"
                        + "  INSERT INTO b VALUES (3);\n"
                        + "END;\n"
                        + "SELECT * FROM a UNION ALL SELECT * FROM b;";
        assertThat(cli.run("sql", "-e", script)).as(cli.err.toString()).isZero();
        assertThat(out()).containsExactly("1", "2", "3");
    }

    @Test
    void ddlSetAndShowRun() {
        String script =
                "SET 'table.exec.resource.default-parallelism' = '1';\n"
                        + "SET 'table.local-time-zone' = 'UTC';\n"
                        + "CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1), (2)) AS t(x);\n"
                        + "CREATE TABLE gen (x INT) WITH ('connector' = 'datagen',"
                        + " 'number-of-rows' = '3');\n"
                        + "SHOW TABLES;\n"
                        + "DROP TABLE gen;\n"
                        + "SHOW TABLES;\n"
                        + "SELECT SUM(x) FROM v;\n"
                        // SET changes the session: the same instant in another zone
                        + "SELECT CAST(TO_TIMESTAMP_LTZ(0, 0) AS STRING);\n"
                        + "SET 'table.local-time-zone' = 'Asia/Tokyo';\n"
                        + "SELECT CAST(TO_TIMESTAMP_LTZ(0, 0) AS STRING);\n"
                        + "RESET 'table.local-time-zone';\n"
                        + "SET;";
        assertThat(cli.run("sql", "-e", script)).as(cli.err.toString()).isZero();
        List<String> out = out();
        assertThat(out.subList(0, 6))
                .containsExactly(
                        "gen", "v", "v", "3", "1970-01-01 00:00:00.000", "1970-01-01 09:00:00.000");
        // SET alone lists the options set (with those the table environment sets itself)
        assertThat(out.subList(6, out.size()))
                .contains("table.exec.resource.default-parallelism\t1")
                .noneMatch(l -> l.startsWith("table.local-time-zone"))
                .isSorted();
    }

    /**
     * A query whose state is tens of MB checkpoints through the command's defaults (a file system
     * checkpoint directory): in JobManager memory, checkpoints over 5 MiB fail and then the job
     * ("Exceeded checkpoint tolerable failure threshold"). 120,000 distinct ids in 16 partitions
     * with expected_items 50,000,000 each touch about 7 pages of 64 bytes apiece (seen here: about
     * 45 MB of checkpoint for 80,000 ids); a checkpoint every second makes sure several are taken
     * while the state is large.
     */
    @Test
    void queryWithTensOfMegabytesOfStateCheckpoints() {
        String script =
                "CREATE TABLE ids (id BIGINT) WITH ('connector' = 'datagen',"
                        + " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
                        + " 'fields.id.end' = '120000', 'rows-per-second' = '40000');\n"
                        + "CREATE TABLE sink (k BIGINT, id BIGINT) WITH ('connector' = 'blackhole');\n"
                        + "CREATE TEMPORARY VIEW keyed AS SELECT MOD(id, 16) AS k, id FROM ids;\n"
                        + "INSERT INTO sink SELECT * FROM BLOOM_DEDUP(input => TABLE keyed"
                        + " PARTITION BY k, id_column => 'id', expected_items => 50000000,"
                        + " fpp => 0.01);\n"
                        + "SELECT COUNT(*) FROM (VALUES (1)) AS t(x);";
        assertThat(cli.run("sql", "--checkpoint-interval", "1s", "-e", script))
                .as(cli.err.toString())
                .isZero();
        assertThat(out()).containsExactly("1");
    }

    @Test
    void everyBloomFunctionIsRegistered() {
        // SHOW FUNCTIONS lists the temporary system functions under their (lower-cased) names.
        assertThat(cli.run("sql", "-e", "SHOW FUNCTIONS")).as(cli.err.toString()).isZero();
        Set<String> shown = new HashSet<>(out());
        for (String name : BloomFunctions.all().keySet()) {
            assertThat(shown).as(name).containsAnyOf(name, name.toLowerCase(java.util.Locale.ROOT));
        }
        assertThat(shown).contains("upper"); // a built-in: the listing is the real one
    }

    @Test
    void userFunctionsCanBeCreatedInTheScript() {
        String script =
                "CREATE TEMPORARY FUNCTION twice AS '"
                        + Twice.class.getName()
                        + "';\n"
                        + "SELECT twice(x) FROM (VALUES (1), (21)) AS t(x);";
        assertThat(cli.run("sql", "-e", script)).as(cli.err.toString()).isZero();
        assertThat(out()).containsExactly("2", "42");
    }

    @Test
    void semicolonsInLiteralsAndCommentsDoNotEndAStatement() throws Exception {
        Path script = tmp.resolve("quoted.sql");
        Files.writeString(
                script,
                "-- a comment; it's not a statement\n"
                        + "/* nor is this; */ SELECT 'a;b' AS `c;d`, 'it''s; -- ok', /* x; */ 1 --;\n"
                        + "  ; -- that ';' ended it\n"
                        + "SELECT 2 /* a trailing statement without ';' */\n"
                        + "-- only a comment after it;");
        assertThat(cli.run("sql", "-f", script.toString())).as(cli.err.toString()).isZero();
        assertThat(out()).containsExactly("a;b\tit's; -- ok\t1", "2");
    }

    @Test
    void failingStatementPrintsOneLineNamingItAndExitsWithOne() throws Exception {
        Path script = tmp.resolve("bad.sql");
        Files.writeString(
                script,
                "SELECT 1;\n\n-- the table does not exist\nSELECT *\n  FROM nope;\nSELECT 2;\n");
        assertThat(cli.run("sql", "-f", script.toString())).isEqualTo(1);
        assertThat(out()).containsExactly("1"); // stopped at the failing statement
        List<String> err = cli.err.toString().lines().collect(Collectors.toList());
        assertThat(err).hasSize(2);
        assertThat(err.get(1)).startsWith("Flink's log: ");
        // Flink's positions are positions in the script, thanks to the padding.
        assertThat(err.get(0))
                .startsWith("error: statement at line 4 (SELECT *): ")
                .contains("From line 5, column 8 to line 5, column 11: Object 'nope' not found");
    }

    @Test
    void thePlainCountOnAnUpdatingTableSaysToAddRetract() throws Exception {
        Path script = tmp.resolve("latest.sql");
        Files.writeString(
                script,
                clicksTable()
                        + "CREATE TEMPORARY VIEW latest AS SELECT `user`, LAST_VALUE(page) AS page"
                        + " FROM clicks GROUP BY `user`;\n"
                        + "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01) FROM latest"
                        + " GROUP BY page;\n"
                        + "SELECT BLOOM_BUILD(`user`, 10000, 0.01) FROM latest;\n");
        assertThat(cli.run("sql", "-f", script.toString())).isEqualTo(1);
        List<String> err = cli.err.toString().lines().collect(Collectors.toList());
        assertThat(err.get(0)).contains("Could not find an implementation method 'retract'");
        assertThat(err.get(1))
                .isEqualTo(
                        "hint: BLOOM_COUNT_DISTINCT's input is an updating table (after a GROUP"
                                + " BY, a join, a CDC or upsert source): use its counting form,"
                                + " BLOOM_COUNT_DISTINCT(value, expected_items, fpp, 'retract')"
                                + " (docs/sql-functions.md)");
        assertThat(SqlCommand.hint(err.get(0).replace("BLOOM_COUNT_DISTINCT", "BLOOM_BUILD")))
                .startsWith("hint: BLOOM_BUILD's input is an updating table")
                .contains("cannot forget a value");
    }

    /**
     * A BLOOM_DEDUP call that Calcite refuses before the function sees it (a misspelt table
     * argument, a literal of another type) gets Calcite's message, which names no argument, and
     * under it a hint that does.
     */
    @Test
    void aDedupCallCalciteRefusesGetsAHintNamingTheArgument() {
        String[][] cases = {
            {
                "inpt => TABLE clicks, id_column => 'user', expected_items => 10, fpp => 0.01",
                "DEFAULT is only allowed for optional parameters",
                "hint: BLOOM_DEDUP: unknown argument inpt (did you mean input?); the arguments are"
                        + " input, id_column,"
            },
            {
                "input => TABLE clicks, id_column => 'user', expected_items => 10, fpp => 0.01,"
                        + " exact => 'yes'",
                "No match found for function signature BLOOM_DEDUP",
                "hint: BLOOM_DEDUP: argument exact must be a BOOLEAN literal (TRUE or FALSE), was"
                        + " 'yes'"
            }
        };
        for (String[] c : cases) {
            Cli run = new Cli();
            assertThat(
                            run.run(
                                    "sql",
                                    "-e",
                                    clicksTable() + "SELECT * FROM BLOOM_DEDUP(" + c[0] + ");"))
                    .isEqualTo(1);
            List<String> err = run.err.toString().lines().collect(Collectors.toList());
            assertThat(err.get(0)).as(c[0]).startsWith("error: statement at line 2").contains(c[1]);
            assertThat(err.get(1)).as(c[0]).startsWith(c[2]);
        }
    }

    @Test
    void failingJobPrintsOneLineWithTheRootCause() {
        String script =
                "CREATE TEMPORARY FUNCTION boom AS '"
                        + Boom.class.getName()
                        + "';\n"
                        + "SELECT boom(x) FROM (VALUES (1), (2)) AS t(x);";
        assertThat(cli.run("sql", "-e", script)).isEqualTo(1);
        List<String> err = cli.err.toString().lines().collect(Collectors.toList());
        assertThat(err).hasSize(2);
        assertThat(err.get(0))
                .startsWith("error: statement at line 2 (SELECT boom(x) FROM ")
                .contains("IllegalArgumentException: boom on 1");
        // the stack traces are in Flink's log, named on the console
        Path log = Path.of(err.get(1).substring("Flink's log: ".length()));
        assertThat(log).exists();
        assertThat(lines(log)).anyMatch(l -> l.contains("boom on 1"));
    }

    @Test
    void missingScriptFileIsAUsageError() {
        assertThat(cli.run("sql", "-f", tmp.resolve("none.sql").toString())).isEqualTo(2);
        assertThat(cli.err.toString()).contains("--file: no such file: ");
        assertThat(new Cli().run("sql")).as("-f or -e is required").isEqualTo(2);
    }

    private static java.util.stream.Stream<String> lines(Path file) {
        try {
            return Files.readAllLines(file).stream();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A test function: doubles an INT. */
    public static final class Twice extends ScalarFunction {
        /** {@code 2 * x}. */
        public Integer eval(Integer x) {
            return x == null ? null : 2 * x;
        }
    }

    /** A test function that fails the job on its first row. */
    public static final class Boom extends ScalarFunction {
        /** Throws. */
        public Integer eval(Integer x) {
            throw new IllegalArgumentException("boom on " + x);
        }
    }
}
