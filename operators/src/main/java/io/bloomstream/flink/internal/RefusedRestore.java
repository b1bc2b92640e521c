package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.SuppressRestartsException;

/**
 * A restore the operators refuse (state of another shape, hash or time domain than the job's
 * config): no restart can fix it, so the job fails for good instead of looping through its restart
 * strategy. The message is in the cause, an {@link IllegalStateException}: Flink's {@link
 * SuppressRestartsException} says only that it suppresses restarts.
 */
@Internal
public final class RefusedRestore {

    private RefusedRestore() {}

    /** The exception to throw for a refused restore with {@code message}. */
    public static SuppressRestartsException of(String message) {
        return new SuppressRestartsException(new IllegalStateException(message));
    }
}
