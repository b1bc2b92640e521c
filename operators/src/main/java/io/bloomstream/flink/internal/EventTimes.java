package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;

/**
 * The event time of a record as the event-time operators read it. A record has no timestamp when
 * its timestamp is null or {@link Long#MIN_VALUE}: Flink's current sources ({@code fromData},
 * {@code FileSource}, any source without a {@code WatermarkStrategy}) mark "no timestamp" as {@code
 * Long.MIN_VALUE}, not as null. Such a record goes to the operator's rejected output; the first one
 * an instance meets is logged with the fix, since a job that forgot its {@code WatermarkStrategy}
 * sends every record there.
 */
@Internal
public final class EventTimes {

    private final Logger log;
    private final String operator;
    private boolean warned;

    /**
     * @param log the operator's logger
     * @param operator what the message calls the operator, e.g. "Bloom dedup with event-time
     *     retention"
     */
    public EventTimes(Logger log, String operator) {
        this.log = log;
        this.operator = operator;
    }

    /** Whether {@code timestamp} stands for a real event time. */
    public static boolean isTimestamp(Long timestamp) {
        return timestamp != null && timestamp != Long.MIN_VALUE;
    }

    /** The record's event time, or null when it has none (logged once per instance). */
    public Long of(Long timestamp) {
        if (isTimestamp(timestamp)) {
            return timestamp;
        }
        if (!warned) {
            warned = true;
            log.warn(
                    "{} received a record without a timestamp ({}): it goes to the rejected"
                            + " output, as will every other such record (counted, logged"
                            + " sparingly). Sources without a WatermarkStrategy (fromData,"
                            + " FileSource, ...) give no timestamps: assign them with"
                            + " WatermarkStrategy.withTimestampAssigner(...) on the source. A"
                            + " WatermarkStrategy guarded by EventTimeBound also gives none to an"
                            + " event time too far ahead of the clock (logged by the source).",
                    operator,
                    timestamp == null ? "null" : "Long.MIN_VALUE");
        }
        return null;
    }
}
