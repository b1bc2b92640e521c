package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * Tests for the worked example of docs/sql-functions.md ("On updating input"): its SQL runs and its
 * final result is the {@code text} block printed below it, so the page cannot drift from what
 * {@code BLOOM_COUNT_DISTINCT(..., 'retract')} does.
 *
 * <p>The format, for whoever edits the page: the line {@value #MARKER}, then a fenced {@code sql}
 * block of statements each ending with {@code ;} at the end of a line (all but the last are run
 * with {@code executeSql}, the last is the query), then a fenced {@code text} block: the query's
 * final rows (its changelog applied), one line per row, its fields separated by one tab, NULL as
 * {@code NULL}, the lines sorted (as Java sorts strings). Prose may stand between the marker and
 * the blocks; no other fenced block may.
 */
class SqlFunctionsDocExampleTest {

    static final Path PAGE = Path.of("../docs/sql-functions.md");

    static final String MARKER = "<!-- example: count-distinct-retract -->";

    @Test
    void countDistinctRetractExamplePrintsItsTextBlock() throws Exception {
        List<String> lines = Files.readAllLines(PAGE, StandardCharsets.UTF_8);
        int marker = lines.indexOf(MARKER);
        assertThat(marker).as(MARKER + " in " + PAGE).isNotNegative();
        Block sql = block(lines, marker + 1, "sql");
        Block text = block(lines, sql.end() + 1, "text");

        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        List<String> statements = statements(sql.lines());
        assertThat(statements).as("statements of the example").isNotEmpty();
        for (String s : statements.subList(0, statements.size() - 1)) {
            env.executeSql(s);
        }
        String query = statements.get(statements.size() - 1);
        int fields = env.sqlQuery(query).getResolvedSchema().getColumnCount();
        Map<List<Object>, Row> rows = SqlHarness.finalRows(env.executeSql(query), fields);

        List<String> printed =
                rows.values().stream()
                        .map(SqlFunctionsDocExampleTest::print)
                        .sorted()
                        .collect(Collectors.toList());
        assertThat(printed).as("the final rows of the example in " + PAGE).isEqualTo(text.lines());
    }

    /** A fenced block: its content lines and the index of its closing fence. */
    record Block(List<String> lines, int end) {}

    /** The first fenced block of {@code language} at or after line {@code from}. */
    static Block block(List<String> lines, int from, String language) {
        for (int i = from; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (!line.startsWith("```")) {
                continue;
            }
            assertThat(line)
                    .as("the next fenced block after line %d of %s", from, PAGE)
                    .isEqualTo("```" + language);
            for (int j = i + 1; j < lines.size(); j++) {
                if (lines.get(j).strip().equals("```")) {
                    return new Block(List.copyOf(lines.subList(i + 1, j)), j);
                }
            }
            throw new AssertionError("unclosed ```" + language + " block at line " + (i + 1));
        }
        throw new AssertionError("no ```" + language + " block after line " + from + " of " + PAGE);
    }

    /** The statements of a SQL block: each ends with {@code ;} at the end of a line. */
    static List<String> statements(List<String> sql) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : sql) {
            current.append(line).append('\n');
            if (line.stripTrailing().endsWith(";")) {
                String s = current.toString().strip();
                out.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        assertThat(current.toString().strip()).as("SQL after the last ';'").isEmpty();
        return out;
    }

    /** A row as the text block shows it: its fields separated by tabs, NULL as {@code NULL}. */
    static String print(Row row) {
        return IntStream.range(0, row.getArity())
                .mapToObj(i -> row.getField(i) == null ? "NULL" : row.getField(i).toString())
                .collect(Collectors.joining("\t"));
    }
}
