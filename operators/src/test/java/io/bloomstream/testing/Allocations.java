package io.bloomstream.testing;

import java.lang.management.ManagementFactory;

/**
 * Heap bytes the current thread allocates while running a piece of code, from the JVM's own
 * per-thread counter ({@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}): an
 * exact count of what was asked for, whether or not it was freed since, unlike a heap reading.
 */
public final class Allocations {

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Code that may throw anything. */
    @FunctionalInterface
    public interface Action {
        void run() throws Throwable;
    }

    /** What an {@link Action} allocated, and what it threw (null if nothing). */
    public record Measured(long bytes, long nanos, Throwable thrown) {}

    private Allocations() {}

    /** Runs {@code action} on this thread, counting what it allocates; never throws. */
    public static Measured measure(Action action) {
        long before = MX.getCurrentThreadAllocatedBytes();
        long start = System.nanoTime();
        Throwable thrown = null;
        try {
            action.run();
        } catch (Throwable t) {
            thrown = t;
        }
        long nanos = System.nanoTime() - start;
        return new Measured(MX.getCurrentThreadAllocatedBytes() - before, nanos, thrown);
    }
}
