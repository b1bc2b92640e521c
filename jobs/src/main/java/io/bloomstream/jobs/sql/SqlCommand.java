package io.bloomstream.jobs.sql;

import io.bloomstream.jobs.console.Interrupts;
import io.bloomstream.jobs.console.Logs;
import io.bloomstream.jobs.io.ExecutionOptions;
import io.bloomstream.jobs.io.StateDir;
import io.bloomstream.jobs.io.StateDirLock;
import io.bloomstream.table.BloomFunctions;
import io.bloomstream.table.internal.DedupCallHints;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sql}: runs a SQL script with every bloomstream function registered. */
@Command(
        name = "sql",
        mixinStandardHelpOptions = true,
        description = {
            "Runs a Flink SQL script (streaming mode) with every bloomstream function (BLOOM_*)"
                    + " registered, statement by statement. A query prints its final result (its"
                    + " changelog applied) to stdout: one line a row, tab-separated, no header,"
                    + " rows sorted, NULL as \\N. INSERT waits for its job; DDL and SET print"
                    + " nothing.",
            "A failing statement prints one line naming it and its root cause, and where Flink's"
                    + " log is; the command then stops with exit status 1.",
            "Locally, jobs checkpoint every 30s (--checkpoint-interval) into a temporary"
                    + " directory (--checkpoint-dir), deleted at the end: state of any size"
                    + " checkpoints. With --state-dir DIR the state is kept for the next run: the"
                    + " N-th job of the script resumes from DIR/job-N; Ctrl-C stops the running"
                    + " job with a savepoint and ends the script."
        })
public final class SqlCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Script script;

    /** Where the statements come from. */
    static final class Script {
        @Option(
                names = {"-f", "--file"},
                paramLabel = "FILE",
                description = "A file of statements separated by ';' (UTF-8).")
        Path file;

        @Option(
                names = {"-e", "--execute"},
                paramLabel = "STATEMENTS",
                description = "Statements separated by ';'.")
        String statements;
    }

    @Mixin ExecutionOptions execution;

    /** The checkpoint interval of {@code sql} when none is given: state can be large. */
    static final java.time.Duration DEFAULT_CHECKPOINT_INTERVAL = java.time.Duration.ofSeconds(30);

    @Option(
            names = "--checkpoint-dir",
            paramLabel = "DIR",
            description =
                    "Locally: where the jobs checkpoint (default: a temporary directory, deleted"
                            + " at the end).")
    Path checkpointDir;

    @Option(
            names = "--state-dir",
            paramLabel = "DIR",
            description =
                    "Locally: keep each job's state in DIR/job-N for the next run of the script,"
                            + " which resumes from it; Ctrl-C stops the running job with a"
                            + " savepoint. A job that runs to its end (bounded input) keeps none.")
    Path stateDir;

    @Option(
            names = "--verbose",
            description = "Locally: Flink's log on the console (stderr) instead of a log file.")
    boolean verbose;

    @Option(
            names = "--log-file",
            paramLabel = "FILE",
            description =
                    "Locally: where Flink's log goes (default: a new file under"
                            + " $BLOOMSTREAM_LOG_DIR, else TMPDIR/bloomstream-logs-USER (private), named when a"
                            + " statement fails).")
    Path logFile;

    @Override
    public Integer call() throws Exception {
        execution.validate(spec.commandLine());
        if (stateDir != null && checkpointDir != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--state-dir and --checkpoint-dir: give one (the jobs of --state-dir"
                            + " checkpoint into DIR/job-N)");
        }
        execution.defaultCheckpointInterval = DEFAULT_CHECKPOINT_INTERVAL;
        execution.checkpointDir = stateDir != null ? stateDir : checkpointDir;
        List<SqlScript.Statement> statements = SqlScript.split(text());
        try {
            return start(statements);
        } finally {
            execution.cleanUp();
        }
    }

    private int start(List<SqlScript.Statement> statements) throws Exception {
        StreamExecutionEnvironment env = execution.environment();
        if (stateDir != null && !execution.local) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--state-dir keeps the state of local runs; on a cluster, Flink's savepoints"
                            + " do (SET 'execution.state-recovery.path' = '...' before a statement)");
        }
        Path log = execution.local ? Logs.configure(spec.name(), verbose, logFile) : null;
        StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
        BloomFunctions.registerAll(tableEnv);
        java.util.concurrent.atomic.AtomicBoolean interrupted =
                stateDir != null ? Interrupts.register() : null;
        StateDirLock lock = null;
        try {
            SqlStateDir state = null;
            if (stateDir != null) {
                try {
                    // the whole script holds DIR, the directories of its jobs with it
                    lock = StateDirLock.take(stateDir);
                    state = SqlStateDir.open(stateDir, spec.commandLine().getErr(), interrupted);
                } catch (StateDir.RefusedException | IllegalStateException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
                }
            }
            return run(
                    statements,
                    new SqlRunner(tableEnv, spec.commandLine().getOut(), state),
                    state,
                    log);
        } finally {
            if (interrupted != null) {
                Interrupts.unregister(interrupted);
            }
            if (lock != null) {
                lock.close();
            }
        }
    }

    private int run(
            List<SqlScript.Statement> statements, SqlRunner runner, SqlStateDir state, Path log) {
        for (SqlScript.Statement statement : statements) {
            if (state != null && state.interrupted()) {
                // Ctrl-C between jobs: nothing runs to save; the rest is not run
                spec.commandLine()
                        .getErr()
                        .println(
                                "stopping: the statements from line "
                                        + statement.line()
                                        + " on are not run");
                spec.commandLine().getErr().flush();
                return 0;
            }
            try {
                if (!runner.execute(statement)) {
                    return 0; // its job stopped with its state saved
                }
            } catch (Exception e) {
                String cause = cause(e);
                spec.commandLine().getOut().flush();
                spec.commandLine()
                        .getErr()
                        .println(
                                "error: statement at line "
                                        + statement.line()
                                        + " ("
                                        + statement.firstLine()
                                        + "): "
                                        + cause);
                String hint = hint(cause, statement.text());
                if (hint != null) {
                    spec.commandLine().getErr().println(hint);
                }
                if (log != null) {
                    spec.commandLine().getErr().println("Flink's log: " + log);
                }
                spec.commandLine().getErr().flush();
                return 1;
            }
        }
        if (state != null) {
            try {
                state.finished();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return 0;
    }

    private String text() throws IOException {
        if (script.file == null) {
            return script.statements;
        }
        if (!Files.isRegularFile(script.file)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--file: no such file: " + script.file);
        }
        return Files.readString(script.file, StandardCharsets.UTF_8);
    }

    /**
     * What to do about a planning error Flink words for itself, or null: an aggregate without
     * {@code retract} on an updating input (Flink names the method and the function, not the way
     * out); a {@code BLOOM_DEDUP} call Calcite refuses before the function sees it, naming no
     * argument ({@link DedupCallHints}: the argument, read from the statement's text).
     */
    static String hint(String message, String statement) {
        return DedupCallHints.explain(statement, message)
                .map(h -> "hint: " + h)
                .orElseGet(() -> hint(message));
    }

    /** {@link #hint(String, String)} for the errors the message alone explains. */
    static String hint(String message) {
        if (!message.contains("Could not find an implementation method 'retract'")) {
            return null;
        }
        String prefix =
                "hint: %s's input is an updating table (after a GROUP BY, a join, a CDC"
                        + " or upsert source): ";
        if (message.contains("'BLOOM_COUNT_DISTINCT'")) {
            return String.format(prefix, "BLOOM_COUNT_DISTINCT")
                    + "use its counting form, BLOOM_COUNT_DISTINCT(value, expected_items, fpp,"
                    + " 'retract') (docs/sql-functions.md)";
        }
        for (String f : new String[] {"BLOOM_BUILD", "BLOOM_UNION"}) {
            if (message.contains("'" + f + "'")) {
                return String.format(prefix, f)
                        + "a filter of bits cannot forget a value; build it over an insert-only"
                        + " input or a window, or count with BLOOM_COUNT_DISTINCT(..., 'retract')"
                        + " (docs/sql-functions.md)";
            }
        }
        return null;
    }

    /**
     * The exception's message, and its root cause's if that says more (a job's failure is wrapped
     * in "Job execution failed" and the like), on one line.
     */
    static String cause(Throwable e) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = e; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        Throwable root = chain.get(chain.size() - 1);
        String message = describe(e);
        if (root != e) {
            String rootMessage = describe(root);
            if (!message.contains(root.getMessage() == null ? rootMessage : root.getMessage())) {
                message += " (caused by " + rootMessage + ")";
            }
        }
        return message.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    private static String describe(Throwable t) {
        return t.getMessage() == null || t.getMessage().isBlank()
                ? t.getClass().getName()
                : t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
