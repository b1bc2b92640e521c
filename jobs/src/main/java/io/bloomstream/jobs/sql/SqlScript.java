package io.bloomstream.jobs.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A SQL script cut into statements at each {@code ;} that is not inside a string literal ({@code
 * '...'}, with {@code ''} for a quote), a quoted identifier ({@code `...`} or {@code "..."}), a
 * line comment ({@code -- ...}) or a block comment or hint ({@code /* ... *}{@code /}). A statement
 * set ({@code EXECUTE STATEMENT SET BEGIN ...; ...; END;}) is one statement. A last statement
 * without {@code ;} counts; text that is only comments and white space is no statement.
 *
 * <p>Flink has no public splitter: its SQL client feeds the input to the SQL parser's token manager
 * (which lives inside the planner, hidden by flink-table-planner-loader), and its SQL gateway's
 * script runner ({@code ScriptExecutor}, for application mode) scans characters the same way as
 * this class. Anything this scanner passes through unchanged (an unterminated literal, say) is
 * reported by Flink's parser when the statement runs.
 */
public final class SqlScript {

    private static final Pattern STATEMENT_SET = Pattern.compile("\\bSTATEMENT SET BEGIN\\b");

    private enum State {
        NORMAL,
        SINGLE_QUOTE,
        DOUBLE_QUOTE,
        BACK_QUOTE,
        LINE_COMMENT,
        BLOCK_COMMENT
    }

    private SqlScript() {}

    /** One statement of a script, without its {@code ;}, with where it starts in the script. */
    public record Statement(String text, int line, int column) {

        /** The statement's first line (what error messages name). */
        public String firstLine() {
            int end = text.indexOf('\n');
            return (end < 0 ? text : text.substring(0, end)).strip();
        }

        /**
         * The statement preceded by as many line breaks and spaces as precede it in the script, so
         * that the positions in Flink's parser messages ("From line 3, column 15") are positions in
         * the script.
         */
        public String padded() {
            return "\n".repeat(line - 1) + " ".repeat(column - 1) + text;
        }
    }

    /** The statements of {@code script}, in order. */
    public static List<Statement> split(String script) {
        List<Statement> statements = new ArrayList<>();
        State state = State.NORMAL;
        int start = -1; // first significant character of the current statement, or -1
        // the current statement with literals and comments blanked, to recognize statement sets
        StringBuilder significant = new StringBuilder();
        int pieceStart = 0; // where, in significant, the text after the last ';' begins
        int n = script.length();
        for (int i = 0; i < n; i++) {
            char c = script.charAt(i);
            char next = i + 1 < n ? script.charAt(i + 1) : '\0';
            switch (state) {
                case NORMAL:
                    if (c == '-' && next == '-') {
                        state = State.LINE_COMMENT;
                        significant.append(' ');
                        i++;
                    } else if (c == '/' && next == '*') {
                        state = State.BLOCK_COMMENT;
                        significant.append(' ');
                        i++;
                    } else if (c == ';') {
                        if (start >= 0 && !insideStatementSet(significant, pieceStart)) {
                            statements.add(statement(script, start, i));
                            start = -1;
                            significant.setLength(0);
                            pieceStart = 0;
                        } else if (start >= 0) {
                            significant.append(c);
                            pieceStart = significant.length();
                        }
                    } else {
                        if (start < 0 && !Character.isWhitespace(c)) {
                            start = i;
                        }
                        if (c == '\'') {
                            state = State.SINGLE_QUOTE;
                        } else if (c == '"') {
                            state = State.DOUBLE_QUOTE;
                        } else if (c == '`') {
                            state = State.BACK_QUOTE;
                        }
                        significant.append(c);
                    }
                    break;
                case SINGLE_QUOTE:
                    state = c == '\'' ? State.NORMAL : state; // '' reopens at the next quote
                    break;
                case DOUBLE_QUOTE:
                    state = c == '"' ? State.NORMAL : state;
                    break;
                case BACK_QUOTE:
                    state = c == '`' ? State.NORMAL : state;
                    break;
                case LINE_COMMENT:
                    state = c == '\n' ? State.NORMAL : state;
                    break;
                case BLOCK_COMMENT:
                    if (c == '*' && next == '/') {
                        state = State.NORMAL;
                        i++;
                    }
                    break;
                default:
                    throw new IllegalStateException(state.name());
            }
        }
        if (start >= 0) {
            statements.add(statement(script, start, n));
        }
        return statements;
    }

    /** Whether a statement set is open: it started, and the text since the last ';' is not END. */
    private static boolean insideStatementSet(StringBuilder significant, int pieceStart) {
        String all = normalize(significant);
        return STATEMENT_SET.matcher(all).find()
                && !normalize(significant.substring(pieceStart)).equals("END");
    }

    private static String normalize(CharSequence text) {
        return text.toString().strip().replaceAll("\\s+", " ").toUpperCase(Locale.ROOT);
    }

    private static Statement statement(String script, int start, int end) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < start; i++) {
            if (script.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new Statement(
                script.substring(start, end).stripTrailing(), line, start - lineStart + 1);
    }
}
