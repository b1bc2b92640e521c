package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;

/**
 * Logs rejected events without letting a flood of them flood the log: the first ten, then every
 * 10,000th, each line naming the metric that counts them all.
 */
@Internal
public final class RejectLog {

    private final Logger log;
    private final String metric;
    private long logged;

    public RejectLog(Logger log, String metric) {
        this.log = log;
        this.metric = metric;
    }

    /** Notes the {@code count}-th rejected event, for {@code reason}. */
    public void rejected(long count, String reason, Object event) {
        if (logged < 10 || count % 10_000 == 0) {
            logged++;
            String text = String.valueOf(event);
            log.warn(
                    "Rejected event ({}); {} rejected so far, see metric {}: {}",
                    reason,
                    count,
                    metric,
                    text.length() <= 200 ? text : text.substring(0, 200) + "...");
        }
    }
}
