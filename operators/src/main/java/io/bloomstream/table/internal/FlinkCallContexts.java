package io.bloomstream.table.internal;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.utils.CastCallContext;

/**
 * The one place where the SQL functions' planning-time checks depend on a Flink internal: the
 * literal values of a call, which Flink 2.2 and 2.3 hide behind a {@link CastCallContext} when a
 * literal needs a cast to the declared type (an INT literal for a BIGINT argument, a DECIMAL one
 * for a DOUBLE). Should a later Flink rename the wrapped field, the checks fail with a message
 * saying so (a test runs them), never pass silently.
 */
@Internal
public final class FlinkCallContexts {

    private FlinkCallContexts() {}

    /**
     * The call as written: the context a {@link CastCallContext} wraps, or {@code call} itself.
     *
     * @param function the SQL function, for the message
     * @throws IllegalStateException if this Flink version keeps the wrapped context elsewhere
     */
    public static CallContext asWritten(CallContext call, String function) {
        if (!(call instanceof CastCallContext)) {
            return call;
        }
        try {
            java.lang.reflect.Field f = CastCallContext.class.getDeclaredField("originalContext");
            f.setAccessible(true);
            return (CallContext) f.get(call);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    function
                            + ": cannot read the call's literal arguments from "
                            + call.getClass().getName()
                            + " in this Flink version",
                    e);
        }
    }
}
