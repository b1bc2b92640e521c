package io.bloomstream.jobs.sql;

import io.bloomstream.jobs.console.Logs;
import io.bloomstream.jobs.io.ExecutionOptions;
import io.bloomstream.table.BloomFunctions;
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
                    + " checkpoints. SQL state is not resumed by a later run."
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
            names = "--verbose",
            description = "Locally: Flink's log on the console (stderr) instead of a log file.")
    boolean verbose;

    @Option(
            names = "--log-file",
            paramLabel = "FILE",
            description =
                    "Locally: where Flink's log goes (default: a new file under"
                            + " $BLOOMSTREAM_LOG_DIR, else TMPDIR/bloomstream-logs, named when a"
                            + " statement fails).")
    Path logFile;

    @Override
    public Integer call() throws Exception {
        execution.validate(spec.commandLine());
        execution.defaultCheckpointInterval = DEFAULT_CHECKPOINT_INTERVAL;
        execution.checkpointDir = checkpointDir;
        List<SqlScript.Statement> statements = SqlScript.split(text());
        try {
            return run(statements);
        } finally {
            execution.cleanUp();
        }
    }

    private int run(List<SqlScript.Statement> statements) throws Exception {
        StreamExecutionEnvironment env = execution.environment();
        Path log = execution.local ? Logs.configure(spec.name(), verbose, logFile) : null;
        StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
        BloomFunctions.registerAll(tableEnv);
        SqlRunner runner = new SqlRunner(tableEnv, spec.commandLine().getOut());
        for (SqlScript.Statement statement : statements) {
            try {
                runner.execute(statement);
            } catch (Exception e) {
                spec.commandLine().getOut().flush();
                spec.commandLine()
                        .getErr()
                        .println(
                                "error: statement at line "
                                        + statement.line()
                                        + " ("
                                        + statement.firstLine()
                                        + "): "
                                        + cause(e));
                if (log != null) {
                    spec.commandLine().getErr().println("Flink's log: " + log);
                }
                spec.commandLine().getErr().flush();
                return 1;
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
