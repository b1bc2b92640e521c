package io.bloomstream.jobs.sql;

import io.bloomstream.jobs.io.StateDir;
import io.bloomstream.jobs.io.StateDirLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;

/**
 * {@code sql --state-dir DIR}: the state of the jobs a script starts, kept between local runs. The
 * N-th statement of the script that starts a job keeps that job's checkpoints and savepoints in
 * {@code DIR/job-N} (a {@link StateDir}) and resumes from the newest there, as a stream command
 * does from its directory. Ctrl-C (or SIGTERM) stops the running job with a savepoint and ends the
 * script after it (a second Ctrl-C quits at once); a job that fails keeps its retained checkpoints;
 * a job that runs to its end (a bounded input) keeps nothing, since Flink restores no operator that
 * finished: its directory is emptied and the next run starts it afresh. The command holds {@code
 * DIR}'s {@link StateDirLock#take} for the whole script, so a second script on it is refused.
 *
 * <p>A run of the script that did not reach its end ({@code kill -9}, a failed statement, Ctrl-C)
 * is <em>interrupted</em>; the next run <em>continues</em> it: a job that ran to its end in it is
 * not run again (its output stands), the job it stopped in resumes from its checkpoint or
 * savepoint, the jobs after it start. {@value #RUN} records, for the run in progress, a SHA-256 of
 * each job's statement and which jobs ran to their end (format {@value #FORMAT}); a run that
 * reaches the end of the script deletes it, so the next run is a new one, which starts every job. A
 * continuation is refused where a job's statement differs from the interrupted run's and that job
 * ran to its end or resumes from a checkpoint (a recovery): its output would not be the script's.
 */
final class SqlStateDir {

    /** The command recorded in the directories' manifests. */
    static final String COMMAND = "sql";

    /** The record of the run in progress: its jobs' statements, and which ran to their end. */
    static final String RUN = "run.properties";

    /** The version of {@value #RUN}'s layout. */
    static final int FORMAT = 1;

    /** How long to keep retrying a stop that fails (tasks still starting, say). */
    static final long STOP_TIMEOUT_MILLIS = 120_000;

    private final Path dir;
    private final PrintWriter err;
    private final AtomicBoolean interrupted;
    private final Properties run;
    private int jobs;

    private SqlStateDir(Path dir, PrintWriter err, AtomicBoolean interrupted, Properties run) {
        this.dir = dir;
        this.err = err;
        this.interrupted = interrupted;
        this.run = run;
    }

    /**
     * Opens {@code dir} for the {@code sql} command; {@code interrupted} turns true on Ctrl-C.
     *
     * @throws StateDir.RefusedException if the directory belongs to another command, or to nothing
     *     of bloomstream's
     * @throws IllegalStateException if its record of an interrupted run has another format
     */
    static SqlStateDir open(Path dir, PrintWriter err, AtomicBoolean interrupted)
            throws StateDir.RefusedException, IOException {
        StateDir.open(dir, COMMAND, Map.of());
        Properties run = new Properties();
        Path file = dir.resolve(RUN);
        if (Files.isRegularFile(file)) {
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                run.load(r);
            }
            if (!String.valueOf(FORMAT).equals(run.getProperty("format"))) {
                throw new IllegalStateException(
                        "--state-dir "
                                + dir
                                + ": "
                                + RUN
                                + " has format "
                                + run.getProperty("format")
                                + ", this version reads format "
                                + FORMAT);
            }
        }
        return new SqlStateDir(dir, err, interrupted, run);
    }

    /** The script ran to its end: the next run is a new one, which starts every job. */
    void finished() throws IOException {
        Files.deleteIfExists(dir.resolve(RUN));
    }

    private void record() throws IOException {
        run.setProperty("format", String.valueOf(FORMAT));
        Path tmp = dir.resolve(RUN + ".tmp");
        StringBuilder text =
                new StringBuilder("# bloomstream sql: the jobs of this run (deleted at its end)\n");
        // keys and values are plain (job.N, hex digests, true): no escaping; sorted, no date
        new java.util.TreeSet<>(run.stringPropertyNames())
                .forEach(k -> text.append(k).append('=').append(run.getProperty(k)).append('\n'));
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            w.write(text.toString());
        }
        Files.move(tmp, dir.resolve(RUN), StandardCopyOption.REPLACE_EXISTING);
    }

    /** The SHA-256 of a statement's text, without its leading and trailing white space, in hex. */
    static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(
                            MessageDigest.getInstance("SHA-256")
                                    .digest(text.strip().getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether Ctrl-C asked the script to stop. */
    boolean interrupted() {
        return interrupted.get();
    }

    /**
     * The state of the next job the script starts, that of {@code statement}; {@link Job#skipped}
     * if it ran to its end in the interrupted run this one continues.
     *
     * @throws IllegalStateException if the interrupted run ran another statement as this job, and
     *     the job ran to its end or recovers from a checkpoint
     */
    Job next(SqlScript.Statement statement) throws IOException {
        jobs++;
        Path jobDir = dir.resolve("job-" + jobs);
        StateDir state;
        try {
            state = StateDir.open(jobDir, COMMAND, Map.of());
        } catch (StateDir.RefusedException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        String key = "job." + jobs;
        String hash = sha256(statement.text());
        String was = run.getProperty(key);
        boolean ended = Boolean.parseBoolean(run.getProperty(key + ".ended"));
        Path restore = ended ? null : state.latest().orElse(null);
        if (was != null
                && !was.equals(hash)
                && (ended || (restore != null && state.isCheckpoint(restore)))) {
            throw new IllegalStateException(
                    "--state-dir "
                            + dir
                            + ": job "
                            + jobs
                            + (ended
                                    ? " ran to its end in the interrupted run"
                                    : " recovers from the checkpoint of the killed run")
                            + ", which ran another statement as job "
                            + jobs
                            + ": its output would not be this script's. Run the script as it"
                            + " was, or start over with a new (or empty) --state-dir");
        }
        if (ended) {
            say(
                    "state: job "
                            + jobs
                            + " ran to its end in the interrupted run: not run again (its output"
                            + " stands)");
            return new Job(jobs, jobDir, state, null, true);
        }
        run.setProperty(key, hash);
        record();
        say(
                restore == null
                        ? "state: job " + jobs + " new, kept in " + jobDir
                        : "state: job " + jobs + " resuming from " + jobDir);
        return new Job(jobs, jobDir, state, restore, false);
    }

    private void say(String line) {
        err.println(line);
        err.flush();
    }

    /** One job's state: its options, and what happens to the state when the job ends. */
    final class Job {
        private final int number;
        private final Path jobDir;
        private final StateDir state;
        private final Map<String, String> options;
        private final boolean skipped;
        private volatile boolean done;
        private volatile String savepoint;
        private volatile Exception stopFailure;
        private Thread watcher;

        Job(int number, Path jobDir, StateDir state, Path restore, boolean skipped) {
            this.number = number;
            this.jobDir = jobDir;
            this.state = state;
            this.options = state.configuration(restore).toMap();
            this.skipped = skipped;
        }

        /** Whether the job ran to its end in the interrupted run: it is not run again. */
        boolean skipped() {
            return skipped;
        }

        /**
         * The table options of the job: checkpoints and savepoints in its directory, retained when
         * it fails or is cancelled, and its restore.
         */
        Map<String, String> options() {
            return options;
        }

        /** Watches the started job: on Ctrl-C, stops it with a savepoint into its directory. */
        void started(JobClient client) {
            watcher = new Thread(() -> watch(client), "bloomstream-sql-state-" + number);
            watcher.setDaemon(true);
            watcher.start();
        }

        private void watch(JobClient client) {
            try {
                while (!done && !interrupted.get()) {
                    Thread.sleep(100);
                }
                if (done) {
                    return;
                }
                say(
                        "stopping: saving the state of job "
                                + number
                                + " to "
                                + jobDir
                                + " (Ctrl-C again quits without it; the last checkpoint stays)");
                long deadline =
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_TIMEOUT_MILLIS);
                String target = state.savepoints().toUri().toString();
                while (!done) {
                    try {
                        savepoint =
                                client.stopWithSavepoint(
                                                false, target, SavepointFormatType.CANONICAL)
                                        .get();
                        return;
                    } catch (ExecutionException e) {
                        if (System.nanoTime() > deadline
                                || client.getJobStatus().get().isGloballyTerminalState()) {
                            stopFailure = e;
                            return;
                        }
                        Thread.sleep(500); // tasks not all running yet
                    }
                }
            } catch (Exception e) {
                stopFailure = e;
            }
        }

        /**
         * After the statement: {@code normally} is false when waiting for the job failed. Keeps the
         * savepoint a Ctrl-C took (and deletes the older state), empties the directory of a job
         * that ran to its end, and leaves a failed job's checkpoints.
         */
        void ended(boolean normally) throws IOException, InterruptedException {
            if (!interrupted.get() || savepoint != null) {
                done = true;
            }
            watcher.join(STOP_TIMEOUT_MILLIS + 10_000);
            done = true;
            if (savepoint != null) {
                Path kept = Path.of(new org.apache.flink.core.fs.Path(savepoint).toUri().getPath());
                state.keepOnly(kept);
                say(
                        "state: saved in "
                                + jobDir
                                + "; a run with --state-dir "
                                + dir
                                + " resumes from it");
            } else if (stopFailure != null) {
                say(
                        "state: job "
                                + number
                                + " was not saved ("
                                + SqlCommand.cause(stopFailure)
                                + "); its last checkpoint, if any, stays in "
                                + jobDir);
            } else if (normally) {
                run.setProperty("job." + number + ".ended", "true");
                record(); // before the state goes: a kill in between skips the job, not reruns it
                state.clear();
                say(
                        "state: job "
                                + number
                                + " ran to its end: nothing to resume (Flink restores no"
                                + " finished operator)");
            } else {
                say("state: job " + number + " failed; its last checkpoint stays in " + jobDir);
            }
        }

        /** Whether the job was stopped with its state saved (the script then stops). */
        boolean stopped() {
            return savepoint != null;
        }
    }
}
