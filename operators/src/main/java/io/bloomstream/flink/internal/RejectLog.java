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
    private final String what;
    private final String verb;
    private long logged;

    /** Logs "Rejected event (reason); N rejected so far, see metric M: event". */
    public RejectLog(Logger log, String metric) {
        this(log, metric, "Rejected event", "rejected");
    }

    /**
     * Logs "{@code what} (reason); N {@code verb} so far, see metric M: event", for events that go
     * elsewhere than a rejected output (late events to the late output).
     */
    public RejectLog(Logger log, String metric, String what, String verb) {
        this.log = log;
        this.metric = metric;
        this.what = what;
        this.verb = verb;
    }

    /** Notes the {@code count}-th rejected event, for {@code reason}. */
    public void rejected(long count, String reason, Object event) {
        if (logged < 10 || count % 10_000 == 0) {
            logged++;
            String text = String.valueOf(event);
            log.warn(
                    "{} ({}); {} {} so far, see metric {}: {}",
                    what,
                    reason,
                    count,
                    verb,
                    metric,
                    text.length() <= 200 ? text : text.substring(0, 200) + "...");
        }
    }
}
