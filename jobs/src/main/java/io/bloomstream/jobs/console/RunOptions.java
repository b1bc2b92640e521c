package io.bloomstream.jobs.console;

import io.bloomstream.jobs.io.Durations;
import io.bloomstream.jobs.io.InputProgress;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.OutputDirs;
import io.bloomstream.jobs.io.ResumedInput;
import io.bloomstream.jobs.io.StateDir;
import io.bloomstream.jobs.io.StateDirLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How a stream command shows its run: the progress line, where Flink's log goes, and the summary's
 * form. A mixin of the stream commands; {@link #execute} runs their job.
 */
public final class RunOptions {

    /**
     * The root command of a command line that knows whether its stderr is a terminal (the progress
     * line then rewrites itself in place). A command line whose root is not one writes the progress
     * line as plain lines.
     */
    public interface TerminalAware {
        /** Whether the command line's stderr is a terminal. */
        boolean stderrIsTerminal();
    }

    @Option(names = "--quiet", description = "No progress line on stderr.")
    public boolean quiet;

    @Option(
            names = "--verbose",
            description = "Locally: Flink's log on the console (stderr) instead of a log file.")
    public boolean verbose;

    @Option(
            names = "--log-file",
            paramLabel = "FILE",
            description =
                    "Locally: where Flink's log goes (default: a new file under"
                            + " $BLOOMSTREAM_LOG_DIR, else TMPDIR/bloomstream-logs-USER (private), named in the"
                            + " summary).")
    public Path logFile;

    @Option(
            names = "--json",
            description =
                    "Print the summary, with the filter health, as one JSON object on stdout; on"
                            + " failure, one with the error and Flink's log file.")
    public boolean json;

    @Option(
            names = "--progress-interval",
            hidden = true,
            paramLabel = "DURATION",
            converter = Durations.DurationConverter.class)
    public Duration progressInterval;

    /** What a finished run produced. */
    public static final class Run {
        /** The job's result. */
        public final JobExecutionResult result;

        /** Flink's log file of a local run, or null (verbose, or on a cluster). */
        public final Path logFile;

        /** The metrics of a local run, or null. */
        public final LocalMetrics metrics;

        /**
         * The retained checkpoint of a killed run this run recovered from (its directory name,
         * {@code chk-N}), or null. Then the counts cover the whole input ({@link #wholeInput}) or
         * this run's records only (Kafka, {@code --new-input}).
         */
        public final String recoveredFrom;

        /** Whether a recovery's counts cover the whole input, the killed run's part included. */
        public final boolean wholeInput;

        Run(JobExecutionResult result, Path logFile, LocalMetrics metrics) {
            this(result, logFile, metrics, null, false);
        }

        Run(
                JobExecutionResult result,
                Path logFile,
                LocalMetrics metrics,
                String recoveredFrom,
                boolean wholeInput) {
            this.result = result;
            this.logFile = logFile;
            this.metrics = metrics;
            this.recoveredFrom = recoveredFrom;
            this.wholeInput = wholeInput;
        }
    }

    /**
     * Runs the job of {@code env}. Locally (the environment {@link IoOptions#environment} made for
     * {@link IoOptions#local}): logging as the options say, a progress line, the run's metrics. A
     * failed job becomes a {@link JobFailedException} with its root cause.
     */
    public Run execute(
            CommandLine.Model.CommandSpec spec,
            IoOptions io,
            StreamExecutionEnvironment env,
            String name)
            throws Exception {
        return execute(spec, io, env, name, Map.of());
    }

    /**
     * {@link #execute(CommandLine.Model.CommandSpec, IoOptions, StreamExecutionEnvironment,
     * String)}, and with {@code --state-dir}: the directory is checked against {@code settings}
     * (the options the command's state depends on, recorded by the first run), the job resumes from
     * its newest savepoint or retained checkpoint, and it stops with a savepoint into it at the end
     * of a file input or on Ctrl-C ({@link Interrupts}).
     */
    public Run execute(
            CommandLine.Model.CommandSpec spec,
            IoOptions io,
            StreamExecutionEnvironment env,
            String name,
            Map<String, String> settings)
            throws Exception {
        try {
            return run(spec, io, env, name, settings);
        } finally {
            io.execution.cleanUp();
        }
    }

    private Run run(
            CommandLine.Model.CommandSpec spec,
            IoOptions io,
            StreamExecutionEnvironment env,
            String name,
            Map<String, String> settings)
            throws Exception {
        io.requireInput();
        if (!io.execution.local) {
            if (io.keepsState()) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--state-dir keeps the state of local runs; on a cluster, Flink's"
                                + " savepoints do (flink stop --savepointPath DIR, then flink run"
                                + " -s SAVEPOINT)");
            }
            refuseNonEmptyOutputs(spec, io, null);
            try {
                return new Run(env.execute(name), null, null);
            } catch (Exception e) {
                throw JobFailedException.of(e, null);
            }
        }
        if (!io.keepsState()) {
            refuseNonEmptyOutputs(spec, io, null);
            return runLocally(spec, io, env, name, null, null);
        }
        StateDirLock lock;
        StateDir state;
        try {
            lock = StateDirLock.take(io.stateDir);
        } catch (StateDir.RefusedException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        try (lock) {
            try {
                state = StateDir.open(io.stateDir, spec.name(), settings);
            } catch (StateDir.RefusedException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            refuseNonEmptyOutputs(spec, io, state);
            state.recordOutputs(List.copyOf(io.fileOutputs().values()));
            return runLocally(spec, io, env, name, state, lock);
        }
    }

    /**
     * Refuses a file output directory that holds files of an earlier run, unless {@code --append}
     * or {@code state} wrote it ({@link OutputDirs}).
     */
    private static void refuseNonEmptyOutputs(
            CommandLine.Model.CommandSpec spec, IoOptions io, StateDir state) throws Exception {
        for (Map.Entry<String, String> output : io.fileOutputs().entrySet()) {
            String refusal =
                    OutputDirs.refusal(output.getKey(), output.getValue(), io.append, state);
            if (refusal != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), refusal);
            }
        }
    }

    /** A local run; with {@code state}, held by {@code lock}, resumed from it and kept in it. */
    private Run runLocally(
            CommandLine.Model.CommandSpec spec,
            IoOptions io,
            StreamExecutionEnvironment env,
            String name,
            StateDir state,
            StateDirLock lock)
            throws Exception {
        Recovery recovery = null;
        List<String> outputs = new java.util.ArrayList<>(io.fileOutputs().values());
        if (!io.kafka()) {
            outputs.add(io.output + "/_rejected");
        }
        String recoveredFrom = null;
        boolean wholeInput = false;
        if (state != null) {
            Path restore = state.latest().orElse(null);
            env.configure(state.configuration(restore));
            ResumedInput.Decision input = null;
            if (!io.kafka()) {
                input = io.decideInput();
                if (!input.equals(io.inputDecision)) {
                    throw new CommandLine.ParameterException(
                            spec.commandLine(),
                            "--state-dir "
                                    + io.stateDir
                                    + " changed while this run started (another run ended"
                                    + " meanwhile?): run again");
                }
                ResumedInput.record(state.dir(), input, io.input, outputsOf(io));
            }
            String line;
            if (restore == null) {
                line = "state: new, kept in " + io.stateDir;
            } else if (state.isCheckpoint(restore)) {
                line = recovering(io, restore, lock, input);
                recoveredFrom = restore.getFileName().toString();
                wholeInput = input != null && input.recovers();
            } else {
                line = "state: resuming from " + io.stateDir;
            }
            if (restore == null || !state.isCheckpoint(restore)) {
                if (lock.previousPid().isPresent()) {
                    line +=
                            " (the lock of pid "
                                    + lock.previousPid().getAsLong()
                                    + ", which ended without releasing it, was taken over)";
                }
            }
            if (recoveredFrom != null || lock.previousPid().isPresent()) {
                // the in-progress part files of the run (or runs) that did not stop
                recovery =
                        Recovery.start(
                                outputs,
                                wholeInput
                                        ? java.util.Optional.of(input.resumed().started())
                                        : lock.previousStart());
            }
            spec.commandLine().getErr().println(line);
            spec.commandLine().getErr().flush();
        }
        Path log = Logs.configure(spec.name(), verbose, logFile);
        InputProgress input = InputProgress.of(io.runId);
        Progress progress = null;
        try {
            JobClient client = env.executeAsync(name);
            if (io.execution.webUiPort > 0) {
                spec.commandLine()
                        .getErr()
                        .printf("Flink's web UI: http://localhost:%d%n", io.execution.webUiPort);
                spec.commandLine().getErr().flush();
            }
            if (!quiet) {
                progress =
                        Progress.start(
                                spec.commandLine().getErr(),
                                input,
                                io.kafka() ? -1 : inputBytes(io.input),
                                spec.root().userObject() instanceof TerminalAware t
                                        && t.stderrIsTerminal(),
                                progressInterval,
                                () -> {
                                    LocalMetrics m = LocalMetrics.of(io.runId);
                                    if (m != null) {
                                        m.sample(false);
                                    }
                                });
            }
            JobExecutionResult result;
            AtomicBoolean interrupted = state != null ? Interrupts.register() : null;
            try {
                result =
                        state == null
                                ? client.getJobExecutionResult().get()
                                : new KeptState(spec.commandLine().getErr(), state, io)
                                        .await(client, interrupted, progress, log);
            } catch (ExecutionException e) {
                throw JobFailedException.of(e, log);
            } finally {
                if (interrupted != null) {
                    Interrupts.unregister(interrupted);
                }
                if (progress != null) {
                    progress.close();
                }
            }
            if (recovery != null) {
                recovery.finish(outputs, spec.commandLine().getErr());
            }
            LocalMetrics metrics = LocalMetrics.of(io.runId);
            if (metrics != null) {
                // the cluster closes the reporter as it shuts down, after its last sample
                metrics.awaitClosed(10, TimeUnit.SECONDS);
                metrics.sample(true);
            }
            return new Run(result, log, metrics, recoveredFrom, wholeInput);
        } finally {
            InputProgress.remove(io.runId);
            LocalMetrics.remove(io.runId);
        }
    }

    /**
     * What a run resuming from a retained checkpoint says: the run before it did not stop with its
     * state saved, which run (a stale lock's pid) and which checkpoint.
     */
    static String recovering(
            IoOptions io, Path checkpoint, StateDirLock lock, ResumedInput.Decision input) {
        String when;
        try {
            when =
                    ", taken "
                            + java.nio.file.Files.getLastModifiedTime(
                                            checkpoint.resolve("_metadata"))
                                    .toInstant()
                                    .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        } catch (java.io.IOException e) {
            when = "";
        }
        String who =
                lock.previousPid().isPresent()
                        ? "the last run (pid "
                                + lock.previousPid().getAsLong()
                                + ") was killed or crashed"
                        : "the last run failed or was killed";
        return "state: recovering from "
                + io.stateDir
                + ": "
                + who
                + " before it saved its state; resuming from its last checkpoint ("
                + checkpoint.getFileName()
                + when
                + "). "
                + (input != null && input.recovers()
                        ? "This run reads on where that checkpoint left "
                                + io.input
                                + ": what the killed run wrote up to the checkpoint stays, what it"
                                + " wrote after it is removed and written again by this run, once;"
                                + " the counts cover the whole input"
                        : input != null
                                ? "This run reads "
                                        + io.input
                                        + " from its start as a new input ("
                                        + ResumedInput.NEW_INPUT_FLAG
                                        + "), with the checkpoint's state; its counts are this"
                                        + " run's only"
                                : "This run reads on from the offsets of that checkpoint: what"
                                        + " the killed run wrote after it was never committed;"
                                        + " the counts are this run's only");
    }

    /** The output directories a recovery must write again, as the input's record lists them. */
    private static List<String> outputsOf(IoOptions io) {
        return List.copyOf(io.fileOutputs().values());
    }

    /**
     * The bytes under a file or directory, as the file source reads them (hidden files, starting
     * with . or _, left out); -1 if they cannot be listed.
     */
    static long inputBytes(String input) {
        try {
            org.apache.flink.core.fs.Path p = new org.apache.flink.core.fs.Path(input);
            FileSystem fs = p.getFileSystem();
            return bytes(fs, fs.getFileStatus(p), 0);
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long bytes(FileSystem fs, FileStatus status, int depth)
            throws java.io.IOException {
        if (!status.isDir()) {
            return status.getLen();
        }
        if (depth > 64) {
            return 0;
        }
        long total = 0;
        FileStatus[] children = fs.listStatus(status.getPath());
        if (children != null) {
            for (FileStatus c : children) {
                String n = c.getPath().getName();
                if (!n.startsWith(".") && !n.startsWith("_")) {
                    total += bytes(fs, c, depth + 1);
                }
            }
        }
        return total;
    }
}
