package io.bloomstream.testing;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;

/**
 * Passes records through and throws once, after {@code after} records that arrived once a
 * checkpoint had completed, so the restart restores real state (a failure before the first
 * checkpoint restores nothing and proves nothing). Its flags are static: one injected failure per
 * JVM at a time, which is how the mini-cluster and Kafka ITs use it. Shared by the operators' and
 * the jobs' tests through the operators test-jar.
 *
 * @param <T> the record type
 */
public final class FailOnce<T> implements MapFunction<T, T>, CheckpointListener {

    private static final long serialVersionUID = 1L;

    /** Whether a failure is to be injected in this run. */
    public static final AtomicBoolean ENABLED = new AtomicBoolean();

    /** Whether it was. */
    public static final AtomicBoolean FAILED = new AtomicBoolean();

    /** Whether a checkpoint completed (on any subtask of the operator). */
    public static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();

    private static final AtomicLong SEEN = new AtomicLong();

    private final long after;

    /** Fails after {@code after} records seen past the first completed checkpoint. */
    public FailOnce(long after) {
        this.after = after;
    }

    /** Arms ({@code enabled}) or disarms the failure and clears the flags, before a run. */
    public static void reset(boolean enabled) {
        ENABLED.set(enabled);
        FAILED.set(false);
        CHECKPOINTED.set(false);
        SEEN.set(0);
    }

    @Override
    public T map(T value) {
        if (ENABLED.get()
                && !FAILED.get()
                && CHECKPOINTED.get()
                && SEEN.incrementAndGet() >= after
                && FAILED.compareAndSet(false, true)) {
            throw new IllegalStateException("injected failure");
        }
        return value;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        CHECKPOINTED.set(true);
    }
}
