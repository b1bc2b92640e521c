package io.bloomstream.table.internal;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.utils.CastCallContext;

/**
 * The one place where the SQL functions' planning-time checks depend on Flink internals: the
 * literal values of a call, which Flink 2.2 and 2.3 hide behind a {@link CastCallContext} when a
 * literal needs a cast to the declared type (an INT literal for a BIGINT argument, a DECIMAL one
 * for a DOUBLE); and the argument names of a call as written, which Calcite drops when it orders
 * named arguments by the declared ones ({@code SqlCallBinding#permutedOperands} skips a name no
 * parameter has, so {@code retention_typo => ...} would reach the function as if never written).
 * Should a later Flink rename what these read, the checks fail with a message saying so (a test
 * runs them), never pass silently.
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

    /**
     * The argument names of a call as the user wrote them ({@code name => value}), in their order,
     * read from the Calcite {@code SqlCallBinding} inside Flink's {@code CallBindingCallContext},
     * since the context's own arguments are already ordered by the declared names, an unknown name
     * dropped. For a table function in {@code FROM}, Calcite's {@code ProcedureNamespace} first
     * validates the reordered call (both type strategies see it, without names) and then infers the
     * row type from the call as written: the output type strategy of that second pass is the first
     * hook that sees the names (Flink 2.2.1 and 2.3.0 alike).
     *
     * @param function the SQL function, for the message
     * @param parameters how many parameters the function has, Flink's system arguments included
     * @return the names (an empty list for a positional call, or one not validated from SQL, such
     *     as a Table API call or the planner's later checks), or empty when {@code call} is
     *     Calcite's reordered call, whose names are gone (every parameter present, the absent ones
     *     as {@code DEFAULT}): the call as written is checked after it
     * @throws IllegalStateException if this is a validation call but this Flink version keeps the
     *     call elsewhere
     */
    public static Optional<List<String>> argumentNames(
            CallContext call, String function, int parameters) {
        CallContext written = asWritten(call, function);
        if (!written.getClass().getSimpleName().equals("CallBindingCallContext")) {
            return Optional.of(List.of());
        }
        try {
            Object binding = find(written, "org.apache.calcite.sql.SqlCallBinding", 2);
            if (binding == null) {
                throw new NoSuchFieldException("no SqlCallBinding in " + written.getClass());
            }
            Object sqlCall = binding.getClass().getMethod("getCall").invoke(binding);
            List<?> operands =
                    (List<?>) sqlCall.getClass().getMethod("getOperandList").invoke(sqlCall);
            List<String> names = new ArrayList<>();
            boolean defaults = false;
            for (Object operand : operands) {
                String kind =
                        operand == null
                                ? ""
                                : String.valueOf(
                                        operand.getClass().getMethod("getKind").invoke(operand));
                if (kind.equals("DEFAULT")) {
                    defaults = true;
                } else if (kind.equals("ARGUMENT_ASSIGNMENT")) {
                    Object id =
                            operand.getClass().getMethod("operand", int.class).invoke(operand, 1);
                    names.add((String) id.getClass().getMethod("getSimple").invoke(id));
                }
            }
            if (names.isEmpty() && defaults && operands.size() == parameters) {
                return Optional.empty();
            }
            return Optional.of(names);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    function
                            + ": cannot read the call's argument names from "
                            + written.getClass().getName()
                            + " in this Flink version",
                    e);
        }
    }

    /**
     * An instance of the class named {@code className} (or of a subclass) held in a field of {@code
     * o}, or of an object one of its fields holds, down to {@code depth} levels (the binding is
     * captured by an anonymous class of the context), or null.
     */
    private static Object find(Object o, String className, int depth)
            throws IllegalAccessException {
        for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                f.setAccessible(true);
                Object value = f.get(o);
                if (value == null) {
                    continue;
                }
                if (isA(value.getClass(), className)) {
                    return value;
                }
                if (depth > 1 && value.getClass().getName().startsWith("org.apache.flink.table")) {
                    Object inner = find(value, className, depth - 1);
                    if (inner != null) {
                        return inner;
                    }
                }
            }
        }
        return null;
    }

    private static boolean isA(Class<?> c, String className) {
        for (; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(className)) {
                return true;
            }
        }
        return false;
    }
}
