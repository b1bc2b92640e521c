package io.bloomstream.jobs.sql;

import io.bloomstream.jobs.io.StateDir;
import io.bloomstream.jobs.io.StateDirLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
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
 */
final class SqlStateDir {

    /** The command recorded in the directories' manifests. */
    static final String COMMAND = "sql";

    /** How long to keep retrying a stop that fails (tasks still starting, say). */
    static final long STOP_TIMEOUT_MILLIS = 120_000;

    private final Path dir;
    private final PrintWriter err;
    private final AtomicBoolean interrupted;
    private int jobs;

    private SqlStateDir(Path dir, PrintWriter err, AtomicBoolean interrupted) {
        this.dir = dir;
        this.err = err;
        this.interrupted = interrupted;
    }

    /**
     * Opens {@code dir} for the {@code sql} command; {@code interrupted} turns true on Ctrl-C.
     *
     * @throws StateDir.RefusedException if the directory belongs to another command, or to nothing
     *     of bloomstream's
     */
    static SqlStateDir open(Path dir, PrintWriter err, AtomicBoolean interrupted)
            throws StateDir.RefusedException, IOException {
        StateDir.open(dir, COMMAND, Map.of());
        return new SqlStateDir(dir, err, interrupted);
    }

    /** Whether Ctrl-C asked the script to stop. */
    boolean interrupted() {
        return interrupted.get();
    }

    /** The state of the next job the script starts. */
    Job next() throws IOException {
        jobs++;
        Path jobDir = dir.resolve("job-" + jobs);
        StateDir state;
        try {
            state = StateDir.open(jobDir, COMMAND, Map.of());
        } catch (StateDir.RefusedException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        Path restore = state.latest().orElse(null);
        say(
                restore == null
                        ? "state: job " + jobs + " new, kept in " + jobDir
                        : "state: job " + jobs + " resuming from " + jobDir);
        return new Job(jobs, jobDir, state, restore);
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
        private volatile boolean done;
        private volatile String savepoint;
        private volatile Exception stopFailure;
        private Thread watcher;

        Job(int number, Path jobDir, StateDir state, Path restore) {
            this.number = number;
            this.jobDir = jobDir;
            this.state = state;
            this.options = state.configuration(restore).toMap();
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
