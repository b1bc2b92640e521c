package io.bloomstream.flink.count;

import io.bloomstream.flink.internal.RefusedRestore;
import io.bloomstream.flink.internal.ShapeRecord;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.Internal;

/**
 * The shape of a count operator's state, written into its savepoints as one line of {@code
 * name=value} fields (operator state {@link CountFunction#SHAPE_STATE}, a union list) and checked
 * when a job restores from them, as dedup's shape record is.
 *
 * <p>The field a restore may not change is {@code window}: the tumbling window's length in
 * milliseconds, or {@code running} for running counts. A key's metadata holds one slot per open
 * window and names each slot by its window's number (event time divided by the window length), not
 * by its length: under another length the numbers would name other windows (an hour's count emitted
 * as a final record of a one-minute window in 1970), and running counts in a windowed slot, or the
 * other way round, would be emitted or fail as an occupied slot. A change fails the restore, for
 * good ({@link RefusedRestore}), naming both values.
 *
 * <p>Versions ({@code version} field): 1, since bloomstream 0.5. State written before has no record
 * and restores unchecked, as it did.
 */
@Internal
final class CountShape {

    /** The first version of the record (bloomstream 0.5). */
    static final int VERSION_1 = 1;

    /** The version this bloomstream writes. */
    static final int VERSION = VERSION_1;

    /** The {@code window} value of running counts. */
    static final String RUNNING = "running";

    private final Map<String, String> fields;

    private CountShape(Map<String, String> fields) {
        this.fields = fields;
    }

    static CountShape of(CountConfig config) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("version", Integer.toString(VERSION));
        f.put(
                "window",
                config.window() == null ? RUNNING : Long.toString(config.window().toMillis()));
        return new CountShape(f);
    }

    String encode() {
        return ShapeRecord.encode(fields);
    }

    static CountShape decode(String text) {
        return new CountShape(ShapeRecord.decode(text));
    }

    /**
     * Checks a restore from state of shape {@code recorded} under this shape.
     *
     * @throws org.apache.flink.runtime.execution.SuppressRestartsException (restarting cannot help)
     *     around an {@link IllegalStateException} naming the field, the savepoint's value and the
     *     job's
     */
    void checkRestore(CountShape recorded) {
        ShapeRecord.checkVersion(recorded.fields, "count state", VERSION);
        String was = recorded.fields.get("window");
        String now = fields.get("window");
        if (!Objects.equals(was, now)) {
            throw RefusedRestore.of(
                    "cannot restore count state: field window was "
                            + display(was)
                            + " in the savepoint and is "
                            + display(now)
                            + " in the job's config; restore with the savepoint's window"
                            + " (CountConfig.Builder#window, or none for running counts), or"
                            + " start the count without this state (another uid prefix)");
        }
    }

    private static String display(String window) {
        return window == null || window.equals(RUNNING)
                ? "running counts (no window)"
                : window + " ms";
    }

    @Override
    public String toString() {
        return encode();
    }
}
