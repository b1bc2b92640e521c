package io.bloomstream.jobs.console;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Map;

/** One JSON object a line on a command's stdout, for {@code --json}. */
public final class JsonObjects {

    private JsonObjects() {}

    /**
     * Prints {@code fields} as one JSON object and a newline: whole numbers as integers, other
     * numbers as they are (NaN and infinities as null), booleans, null, and anything else as its
     * string.
     */
    public static void print(PrintWriter out, Map<String, ?> fields) {
        try (JsonGenerator g =
                new JsonFactory()
                        .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                        .createGenerator(out)) {
            g.writeStartObject();
            for (Map.Entry<String, ?> kv : fields.entrySet()) {
                Object v = kv.getValue();
                if (v == null) {
                    g.writeNullField(kv.getKey());
                } else if (v instanceof Double || v instanceof Float) {
                    double d = ((Number) v).doubleValue();
                    if (Double.isNaN(d) || Double.isInfinite(d)) {
                        g.writeNullField(kv.getKey());
                    } else {
                        g.writeNumberField(kv.getKey(), d);
                    }
                } else if (v instanceof Number) {
                    g.writeNumberField(kv.getKey(), ((Number) v).longValue());
                } else if (v instanceof Boolean) {
                    g.writeBooleanField(kv.getKey(), (Boolean) v);
                } else {
                    g.writeStringField(kv.getKey(), v.toString());
                }
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.println();
        out.flush();
    }

    /**
     * The object a failed command prints with {@code --json}: the command, {@code "failed"}, the
     * error in one line, Flink's log file (null if none) and the exit status.
     */
    public static void failure(
            PrintWriter out, String command, String error, java.nio.file.Path log, int status) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("command", command);
        m.put("status", "failed");
        m.put("error", error);
        m.put("log_file", log == null ? null : log.toString());
        m.put("exit_status", status);
        print(out, m);
    }
}
