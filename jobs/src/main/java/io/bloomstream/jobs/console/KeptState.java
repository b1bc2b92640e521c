package io.bloomstream.jobs.console;

import io.bloomstream.jobs.io.InputProgress;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.StateDir;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;

/**
 * Runs a local job that keeps its state in a {@link StateDir} until it is to stop, then stops it
 * with a savepoint into the directory: when every reader of a file input held at its end ({@code
 * HoldAtEnd}), or on Ctrl-C. Says on the console what it does.
 */
final class KeptState {

    /** How long to keep retrying a stop that fails (tasks still starting, say). */
    static final long STOP_TIMEOUT_MILLIS = 120_000;

    private final PrintWriter err;
    private final StateDir state;
    private final IoOptions io;

    KeptState(PrintWriter err, StateDir state, IoOptions io) {
        this.err = err;
        this.state = state;
        this.io = io;
    }

    /**
     * Waits for the job to end, or to be stopped with its state saved.
     *
     * @throws ExecutionException if the job failed (its checkpoints stay in the directory)
     */
    JobExecutionResult await(
            JobClient client, AtomicBoolean interrupted, Progress progress, Path log)
            throws Exception {
        CompletableFuture<JobExecutionResult> done = client.getJobExecutionResult();
        InputProgress input = InputProgress.of(io.runId);
        boolean bounded = !io.kafka(); // --bounded is refused with a state directory
        while (true) {
            try {
                return done.get(100, TimeUnit.MILLISECONDS);
            } catch (TimeoutException running) {
                // check the reasons to stop
            }
            if (interrupted.get()) {
                if (progress != null) {
                    progress.stopping(); // no last line: the job reads on until the savepoint
                }
                say(
                        "stopping: saving the state to "
                                + io.stateDir
                                + " (Ctrl-C again quits without it; the last checkpoint stays)");
                break;
            }
            if (bounded && input.allReadersAtEnd()) {
                break;
            }
        }
        closeProgress(progress);
        String savepoint = stop(client, done, log);
        JobExecutionResult result = done.get();
        Path kept = Path.of(new org.apache.flink.core.fs.Path(savepoint).toUri().getPath());
        state.keepOnly(kept);
        say(
                "state: saved in "
                        + io.stateDir
                        + "; a run with --state-dir "
                        + io.stateDir
                        + " resumes from it");
        return result;
    }

    /** Stops the job with a savepoint; retries while its tasks are not all running. */
    private String stop(JobClient client, CompletableFuture<JobExecutionResult> done, Path log)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_TIMEOUT_MILLIS);
        String target = state.savepoints().toUri().toString();
        while (true) {
            try {
                return client.stopWithSavepoint(false, target, SavepointFormatType.CANONICAL).get();
            } catch (ExecutionException e) {
                if (done.isDone()) {
                    done.get(); // a failed job: its failure
                    throw JobFailedException.of(
                            "the job ended before its state was saved: "
                                    + JobFailedException.rootCause(e),
                            e,
                            log);
                }
                if (System.nanoTime() > deadline) {
                    client.cancel().get();
                    throw JobFailedException.of(
                            "could not save the state ("
                                    + JobFailedException.rootCause(e)
                                    + "); the job was cancelled, its last checkpoint stays in "
                                    + io.stateDir,
                            e,
                            log);
                }
                Thread.sleep(500);
            }
        }
    }

    private static void closeProgress(Progress progress) {
        if (progress != null) {
            progress.close(); // its last line before the state's lines
        }
    }

    private void say(String line) {
        err.println(line);
        err.flush();
    }
}
