package io.bloomstream.table.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.inference.StaticArgument;

/**
 * The argument names of a process table function call: the known ones (declared, and Flink's system
 * arguments), and the check of the names as written ({@link FlinkCallContexts#argumentNames}),
 * since Calcite drops a name no parameter has, and its value, before the function sees the call.
 */
@Internal
public final class PtfArgumentNames {

    /**
     * The arguments Flink adds to every process table function's declared ones: {@code on_time} and
     * {@code uid} (its {@code SystemTypeInference}).
     */
    static final List<String> SYSTEM_ARGUMENTS = List.of("on_time", "uid");

    private PtfArgumentNames() {}

    /** The names of the declared arguments and of Flink's system arguments, in order. */
    public static List<String> known(List<StaticArgument> declared) {
        List<String> names = new ArrayList<>();
        declared.forEach(a -> names.add(a.getName()));
        names.addAll(SYSTEM_ARGUMENTS);
        return List.copyOf(names);
    }

    /**
     * Refuses an argument name the function does not have, naming it, the known name at most two
     * edits away if any, and the known ones; and a name given twice.
     *
     * @param function the SQL function, for the message
     * @throws IllegalArgumentException naming the argument
     */
    public static void check(String function, List<String> written, List<String> known) {
        Set<String> seen = new HashSet<>();
        for (String name : written) {
            if (!known.contains(name)) {
                String near = nearest(name, known);
                throw new IllegalArgumentException(
                        function
                                + ": unknown argument "
                                + name
                                + (near == null ? "" : " (did you mean " + near + "?)")
                                + "; the arguments are "
                                + String.join(", ", known));
            }
            if (!seen.add(name)) {
                throw new IllegalArgumentException(
                        function + ": argument " + name + " is given twice");
            }
        }
    }

    /** The known name at most two edits from {@code name} (Levenshtein), or null. */
    static String nearest(String name, List<String> known) {
        String best = null;
        int bestDistance = 3;
        for (String k : known) {
            int d = distance(name, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best;
    }

    /** The Levenshtein distance of {@code a} and {@code b} (two rows of the dynamic program). */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j], cur[j - 1]) + 1);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
