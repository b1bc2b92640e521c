package io.bloomstream.jobs;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, for the ITs that watch a running job or process. */
public final class Await {

    private Await() {}

    /**
     * Polls {@code done} every {@code poll} until true; fails naming {@code what} past {@code
     * timeout}.
     */
    public static void until(String what, Duration timeout, Duration poll, BooleanSupplier done)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not reached in " + timeout.toSeconds() + " s");
            }
            Thread.sleep(poll.toMillis()); // polling a condition, with a deadline
        }
    }
}
