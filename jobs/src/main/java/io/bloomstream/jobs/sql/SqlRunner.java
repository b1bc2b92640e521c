package io.bloomstream.jobs.sql;

import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.ResultKind;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.internal.AbstractStreamTableEnvironmentImpl;
import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.api.internal.TableResultInternal;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.operations.ModifyOperation;
import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.QueryOperation;
import org.apache.flink.table.operations.StatementSetOperation;
import org.apache.flink.table.operations.command.ResetOperation;
import org.apache.flink.table.operations.command.SetOperation;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.utils.print.RowDataToStringConverter;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs statements on a table environment, one at a time, the way Flink's SQL client does (parse to
 * one operation, execute it), and prints what they return:
 *
 * <ul>
 *   <li>a query ({@code SELECT}, {@code VALUES}, {@code WITH}) runs as a job until its input ends;
 *       its final result (the changelog applied: an update or delete retracts an earlier row)
 *       prints as one line a row, the fields separated by tabs, no header, the rows sorted (see
 *       {@link #print});
 *   <li>a statement that runs a job and is not a query ({@code INSERT}, {@code EXECUTE STATEMENT
 *       SET}) waits for the job to finish;
 *   <li>a statement with other content ({@code SHOW}, {@code DESCRIBE}, {@code EXPLAIN}) prints it
 *       as Flink renders it, one line a row, fields separated by tabs, in Flink's order;
 *   <li>{@code SET 'key' = 'value'} and {@code RESET} change the table configuration, as in Flink's
 *       SQL client;
 *   <li>anything else (DDL, {@code USE}) prints nothing.
 * </ul>
 *
 * <p>Values render as Flink's SQL client renders them (a cast to {@code STRING}: {@code TRUE},
 * {@code 2026-11-23 10:15:30.000}, {@code x'0a1b'} for bytes). In query results, {@code NULL}
 * prints as {@code \N} and a backslash, tab, line feed or carriage return inside a value as {@code
 * \\}, {@code \t}, {@code \n}, {@code \r}, so that each row is one line: PostgreSQL's {@code COPY}
 * text format, which {@code COPY FROM}, Hive and MySQL's {@code LOAD DATA} read back.
 */
public final class SqlRunner {

    /** How {@code NULL} prints in a query result. */
    public static final String NULL = "\\N";

    private final TableEnvironmentInternal env;
    private final PrintWriter out;

    /** The state kept for the jobs the statements start ({@code --state-dir}), or null. */
    private final SqlStateDir state;

    /** Runs statements on {@code env}, printing results to {@code out}. */
    public SqlRunner(TableEnvironment env, PrintWriter out) {
        this(env, out, null);
    }

    /**
     * Runs statements on {@code env}, printing results to {@code out}, each job keeping its state
     * in {@code state} (null: none kept).
     */
    SqlRunner(TableEnvironment env, PrintWriter out, SqlStateDir state) {
        this.env = (TableEnvironmentInternal) env;
        this.out = out;
        this.state = state;
    }

    /**
     * Runs one statement; returns when it is done (a job finished, a result printed).
     *
     * @return false when a job was stopped with its state saved (Ctrl-C under {@code --state-dir}):
     *     the script stops there
     */
    public boolean execute(SqlScript.Statement statement) throws Exception {
        List<Operation> operations = env.getParser().parse(statement.padded());
        if (operations.size() != 1) {
            throw new IllegalArgumentException(
                    "expected one statement, parsed " + operations.size());
        }
        Operation operation = operations.get(0);
        if (operation instanceof SetOperation set) {
            set(set);
            return true;
        } else if (operation instanceof ResetOperation reset) {
            reset(reset);
            return true;
        }
        SqlStateDir.Job job = state != null && startsJob(operation) ? state.next(statement) : null;
        if (job != null && job.skipped()) {
            return true;
        }
        TableResultInternal result;
        if (job == null) {
            result = env.executeInternal(operation);
        } else {
            Configuration options = env.getConfig().getConfiguration();
            // the planner copies the table configuration into the execution environment's
            Map<String, String> before = executionConfiguration().toMap();
            job.options().forEach(options::setString);
            try {
                result = env.executeInternal(operation);
            } finally {
                // not for the next statement: a job resuming from job N's state would fail
                job.options().keySet().forEach(options::removeKey);
                Configuration copied = executionConfiguration();
                for (String key : job.options().keySet()) {
                    if (before.containsKey(key)) {
                        copied.setString(key, before.get(key));
                    } else {
                        copied.removeKey(key);
                    }
                }
            }
            if (result.getJobClient().isEmpty()) {
                job = null;
            } else {
                job.started(result.getJobClient().get());
            }
        }
        boolean ended = false;
        try {
            finish(operation, result);
            ended = true;
        } finally {
            if (job != null) {
                job.ended(ended);
            }
        }
        out.flush();
        return job == null || !job.stopped();
    }

    /**
     * The execution environment's own configuration, into which the planner copies the table
     * configuration at each job (and removes nothing).
     */
    private Configuration executionConfiguration() {
        return (Configuration)
                ((AbstractStreamTableEnvironmentImpl) env).execEnv().getConfiguration();
    }

    /** Whether the statement runs a job: a query, an INSERT or a statement set, a plan. */
    private static boolean startsJob(Operation operation) {
        return operation instanceof QueryOperation
                || operation instanceof ModifyOperation
                || operation instanceof StatementSetOperation
                || operation.getClass().getSimpleName().startsWith("ExecutePlan");
    }

    /** Prints a query's result, waits for another job, prints other content. */
    private void finish(Operation operation, TableResultInternal result) throws Exception {
        if (operation instanceof QueryOperation) {
            print(result);
        } else if (result.getJobClient().isPresent()) {
            result.await();
        } else if (result.getResultKind() == ResultKind.SUCCESS_WITH_CONTENT) {
            try (CloseableIterator<RowData> rows = result.collectInternal()) {
                RowDataToStringConverter converter = result.getRowDataToStringConverter();
                rows.forEachRemaining(
                        row -> out.println(String.join("\t", render(row, converter, false))));
            }
        }
    }

    /**
     * {@code SET 'key' = 'value'} sets a table configuration option for the statements after it (as
     * in Flink's SQL client); {@code SET} alone prints the options set, one {@code key\tvalue} line
     * each, sorted by key.
     */
    private void set(SetOperation set) {
        TableConfig config = env.getConfig();
        if (set.getKey().isPresent() && set.getValue().isPresent()) {
            config.set(set.getKey().get(), set.getValue().get());
        } else {
            new TreeMap<>(config.getConfiguration().toMap())
                    .forEach((k, v) -> out.println(k + "\t" + v));
            out.flush();
        }
    }

    /** {@code RESET 'key'} unsets one option, {@code RESET} every option set by {@code SET}. */
    private void reset(ResetOperation reset) {
        Configuration config = env.getConfig().getConfiguration();
        if (reset.getKey().isPresent()) {
            config.removeKey(reset.getKey().get());
        } else {
            new ArrayList<>(config.keySet()).forEach(config::removeKey);
        }
    }

    /**
     * Prints a query's final result: the rows left after applying its changelog (an insert or
     * update-after adds a row, an update-before or delete removes one equal row), sorted by their
     * columns from left to right, numbers by value and everything else by its printed text, {@code
     * NULL} first. Sorting makes the output of a parallel job the same from run to run.
     */
    private void print(TableResultInternal result) throws Exception {
        Map<List<String>, Integer> rows = new HashMap<>();
        RowDataToStringConverter converter = result.getRowDataToStringConverter();
        try (CloseableIterator<RowData> changes = result.collectInternal()) {
            while (changes.hasNext()) {
                RowData change = changes.next();
                List<String> row = render(change, converter, true);
                RowKind kind = change.getRowKind();
                if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
                    rows.merge(row, 1, Integer::sum);
                } else if (rows.computeIfPresent(row, (r, c) -> c == 1 ? 0 : c - 1) == null) {
                    throw new IllegalStateException(
                            "the result's changelog retracts a row it never added: " + row);
                } else {
                    rows.remove(row, 0);
                }
            }
        }
        List<List<String>> sorted = new ArrayList<>();
        rows.forEach(
                (row, count) -> {
                    for (int i = 0; i < count; i++) {
                        sorted.add(row);
                    }
                });
        sorted.sort(order(result.getResolvedSchema().getColumnDataTypes()));
        for (List<String> row : sorted) {
            out.println(String.join("\t", row));
        }
    }

    private static List<String> render(
            RowData row, RowDataToStringConverter converter, boolean escape) {
        String[] fields = converter.convert(row);
        List<String> rendered = new ArrayList<>(fields.length);
        for (int i = 0; i < fields.length; i++) {
            rendered.add(row.isNullAt(i) ? NULL : escape ? escape(fields[i]) : fields[i]);
        }
        return rendered;
    }

    /** Backslash, tab, line feed and carriage return escaped as in PostgreSQL's COPY text. */
    static String escape(String value) {
        StringBuilder b = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\\\");
                case '\t' -> b.append("\\t");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /** Columns left to right; numeric columns by value, others by text; NULL first. */
    static Comparator<List<String>> order(List<DataType> columns) {
        Comparator<List<String>> order = (a, b) -> 0;
        for (int i = 0; i < columns.size(); i++) {
            int column = i;
            boolean numeric = columns.get(i).getLogicalType().is(LogicalTypeFamily.NUMERIC);
            Comparator<String> field =
                    Comparator.nullsFirst(
                            numeric ? SqlRunner::compareNumbers : Comparator.naturalOrder());
            order = order.thenComparing(row -> nullable(row.get(column)), field);
        }
        return order;
    }

    private static String nullable(String field) {
        return NULL.equals(field) ? null : field;
    }

    private static int compareNumbers(String a, String b) {
        try {
            return new BigDecimal(a).compareTo(new BigDecimal(b));
        } catch (NumberFormatException e) {
            return a.compareTo(b); // NaN, Infinity: by text
        }
    }
}
