package io.bloomstream.flink.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * The text of a shape record (dedup's {@code bloom-shape}, count's {@code bloom-count-shape}): one
 * line of {@code name=value} fields separated by {@code ;}, in the order written, with a {@code
 * version} field. The record's fields and their meaning belong to each operator; this is the
 * spelling they share.
 */
@Internal
public final class ShapeRecord {

    private ShapeRecord() {}

    /** {@code fields} as one line, in their order. */
    public static String encode(Map<String, String> fields) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : fields.entrySet()) {
            sb.append(sb.length() == 0 ? "" : ";").append(e.getKey()).append('=');
            sb.append(e.getValue());
        }
        return sb.toString();
    }

    /** The fields of a line written by {@link #encode}; parts without a name are skipped. */
    public static Map<String, String> decode(String text) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String part : text.split(";")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                f.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        return f;
    }

    /**
     * The {@code version} of a recorded shape of {@code what} ("dedup state", "count state"),
     * checked to be one this bloomstream reads, 1 to {@code newest}.
     *
     * @throws org.apache.flink.runtime.execution.SuppressRestartsException ({@link RefusedRestore})
     *     for an unreadable or unknown version, naming it
     */
    public static int checkVersion(Map<String, String> recorded, String what, int newest) {
        int version;
        try {
            version = Integer.parseInt(recorded.getOrDefault("version", "0"));
        } catch (NumberFormatException e) {
            throw RefusedRestore.of(
                    "cannot restore " + what + ": unreadable shape record " + encode(recorded));
        }
        if (version < 1 || version > newest) {
            throw RefusedRestore.of(
                    "cannot restore "
                            + what
                            + ": field version was "
                            + version
                            + " in the savepoint and this bloomstream reads 1 to "
                            + newest);
        }
        return version;
    }
}
