package io.bloomstream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;

/** Waits for a running job to reach a point its sink signals, with a deadline. */
public final class JobWaits {

    private JobWaits() {}

    /**
     * Waits until {@code reached} is counted down (by the job's sink), at most two minutes; fails
     * at once with the job's failure if the job ends first.
     */
    public static void until(JobClient job, CountDownLatch reached, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!reached.await(200, TimeUnit.MILLISECONDS)) {
            if (job.getJobStatus().get().isGloballyTerminalState()) {
                job.getJobExecutionResult().get(); // throws the job's failure
                throw new AssertionError("the job ended before " + what);
            }
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
        }
    }
}
