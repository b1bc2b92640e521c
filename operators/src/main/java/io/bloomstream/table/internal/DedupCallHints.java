package io.bloomstream.table.internal;

import static io.bloomstream.table.internal.DedupArguments.EXACT;
import static io.bloomstream.table.internal.DedupArguments.EXPECTED_ITEMS;
import static io.bloomstream.table.internal.DedupArguments.FIRST_BY;
import static io.bloomstream.table.internal.DedupArguments.FPP;
import static io.bloomstream.table.internal.DedupArguments.FUNCTION;
import static io.bloomstream.table.internal.DedupArguments.GENERATIONS;
import static io.bloomstream.table.internal.DedupArguments.ID_COLUMN;
import static io.bloomstream.table.internal.DedupArguments.INPUT;
import static io.bloomstream.table.internal.DedupArguments.RESET_TTL_ON_DUPLICATE;
import static io.bloomstream.table.internal.DedupArguments.RETENTION;
import static io.bloomstream.table.internal.DedupArguments.SHARDS;
import static io.bloomstream.table.internal.DedupArguments.STATE_TTL;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;

/**
 * The argument a {@code BLOOM_DEDUP} call names wrongly, read from the SQL text, for the two
 * planning errors Calcite raises before the function sees the call, naming no argument:
 *
 * <ul>
 *   <li>"DEFAULT is only allowed for optional parameters": a required argument is missing, or
 *       misspelt (Calcite drops a name no parameter has). Only {@code input} is still required (a
 *       table argument cannot be optional in Flink): the others are declared optional so that the
 *       function itself names them ({@link PtfArgumentNames}, {@link DedupArgumentChecks}).
 *   <li>"No match found for function signature BLOOM_DEDUP(...)": a literal whose type cannot be
 *       assigned to the declared one ({@code exact => 'yes'}); Calcite's routine lookup filters by
 *       the declared types.
 * </ul>
 *
 * <p>Used by the {@code sql} command under Flink's message; the text of the call is the only place
 * left where the names and literals are as written.
 */
@Internal
public final class DedupCallHints {

    private static final Pattern CALL =
            Pattern.compile("\\b" + FUNCTION + "\\s*\\(", Pattern.CASE_INSENSITIVE);
    private static final Pattern NAMED =
            Pattern.compile("(?s)\\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\\s*=>\\s*(.*?)\\s*");
    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d+");
    private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+\\.\\d*|\\.\\d+)");
    private static final Pattern DOUBLE =
            Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)[eE][+-]?\\d+");

    /** The argument names in declared order, then Flink's system arguments. */
    private static final List<String> KNOWN =
            List.of(
                    INPUT,
                    ID_COLUMN,
                    EXPECTED_ITEMS,
                    FPP,
                    RETENTION,
                    GENERATIONS,
                    SHARDS,
                    STATE_TTL,
                    RESET_TTL_ON_DUPLICATE,
                    EXACT,
                    FIRST_BY,
                    "on_time",
                    "uid");

    /** What each argument must be, as the messages of {@link DedupArgumentChecks} say it. */
    private static final Map<String, Kind> KINDS =
            Map.ofEntries(
                    Map.entry(INPUT, Kind.TABLE),
                    Map.entry(ID_COLUMN, Kind.STRING),
                    Map.entry(EXPECTED_ITEMS, Kind.INT),
                    Map.entry(FPP, Kind.NUMBER),
                    Map.entry(RETENTION, Kind.INTERVAL),
                    Map.entry(GENERATIONS, Kind.INT),
                    Map.entry(SHARDS, Kind.INT),
                    Map.entry(STATE_TTL, Kind.INTERVAL),
                    Map.entry(RESET_TTL_ON_DUPLICATE, Kind.BOOLEAN),
                    Map.entry(EXACT, Kind.BOOLEAN),
                    Map.entry(FIRST_BY, Kind.STRING),
                    Map.entry("on_time", Kind.DESCRIPTOR),
                    Map.entry("uid", Kind.STRING));

    private enum Kind {
        TABLE("a table, like TABLE events PARTITION BY user_id"),
        STRING("a string literal like 'event_id'"),
        INT("an INT literal"),
        NUMBER("a DECIMAL literal like 0.01"),
        INTERVAL("a day-time INTERVAL literal like INTERVAL '1' DAY"),
        BOOLEAN("a BOOLEAN literal (TRUE or FALSE)"),
        DESCRIPTOR("a DESCRIPTOR of the time column, like DESCRIPTOR(ts)");

        final String what;

        Kind(String what) {
            this.what = what;
        }
    }

    private DedupCallHints() {}

    /**
     * What is wrong with the {@code BLOOM_DEDUP} call of {@code sql}, naming the argument, when
     * {@code message} is one of the two Calcite errors above; else empty.
     */
    public static Optional<String> explain(String sql, String message) {
        boolean missing = message.contains("DEFAULT is only allowed for optional parameters");
        boolean noMatch = message.contains("No match found for function signature " + FUNCTION);
        if (!missing && !noMatch) {
            return Optional.empty();
        }
        for (List<String> args : calls(sql)) {
            Optional<String> hint = explainCall(args, missing);
            if (hint.isPresent()) {
                return hint;
            }
        }
        return Optional.empty();
    }

    private static Optional<String> explainCall(List<String> args, boolean missing) {
        List<String> names = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (String arg : args) {
            Matcher m = NAMED.matcher(arg);
            if (!m.matches()) {
                return Optional.empty(); // a positional call: nothing named to check
            }
            names.add(m.group(1));
            values.add(m.group(2));
        }
        try {
            PtfArgumentNames.check(FUNCTION, names, KNOWN);
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage());
        }
        if (missing && !names.contains(INPUT)) {
            return Optional.of(
                    FUNCTION
                            + ": argument "
                            + INPUT
                            + " is required: the table, like "
                            + INPUT
                            + " => TABLE events PARTITION BY user_id");
        }
        for (int i = 0; i < names.size(); i++) {
            Kind kind = KINDS.get(names.get(i));
            if (!fits(values.get(i), kind)) {
                return Optional.of(
                        DedupArguments.bad(names.get(i), "must be " + kind.what, values.get(i))
                                .getMessage());
            }
        }
        return Optional.empty();
    }

    /**
     * Whether the text of a value can be of the kind; an expression it cannot tell (a CAST, a
     * function call) fits.
     */
    private static boolean fits(String value, Kind kind) {
        String upper = value.toUpperCase(Locale.ROOT);
        Kind literal;
        if (value.startsWith("'")) {
            literal = Kind.STRING;
        } else if (upper.equals("TRUE") || upper.equals("FALSE")) {
            literal = Kind.BOOLEAN;
        } else if (upper.startsWith("TABLE ") || upper.startsWith("TABLE\n")) {
            literal = Kind.TABLE;
        } else if (upper.startsWith("DESCRIPTOR")) {
            literal = Kind.DESCRIPTOR;
        } else if (upper.startsWith("INTERVAL")) {
            return kind == Kind.INTERVAL && !upper.matches("(?s).*\\b(YEAR|MONTH)S?\\s*$");
        } else if (INTEGER.matcher(value).matches()) {
            if (kind == Kind.INT) {
                return new BigInteger(value.replace("+", "")).bitLength() < Integer.SIZE;
            }
            literal = Kind.NUMBER;
        } else if (DECIMAL.matcher(value).matches() || DOUBLE.matcher(value).matches()) {
            literal = Kind.NUMBER;
        } else {
            return true;
        }
        return literal == kind;
    }

    /** The arguments of each {@code BLOOM_DEDUP(...)} call in {@code sql}, as written. */
    static List<List<String>> calls(String sql) {
        List<List<String>> calls = new ArrayList<>();
        Matcher m = CALL.matcher(sql);
        while (m.find()) {
            List<String> args = new ArrayList<>();
            int depth = 0;
            int start = m.end();
            char quote = 0;
            int i = m.end();
            for (; i < sql.length(); i++) {
                char c = sql.charAt(i);
                if (quote != 0) {
                    if (c == quote) {
                        quote = 0; // a doubled quote closes and opens again
                    }
                } else if (c == '\'' || c == '`' || c == '"') {
                    quote = c;
                } else if (c == '(') {
                    depth++;
                } else if (c == ')' && depth-- == 0) {
                    break;
                } else if (c == ',' && depth == 0) {
                    args.add(sql.substring(start, i));
                    start = i + 1;
                }
            }
            if (i < sql.length()) {
                args.add(sql.substring(start, i));
                calls.add(args);
            }
        }
        return calls;
    }
}
