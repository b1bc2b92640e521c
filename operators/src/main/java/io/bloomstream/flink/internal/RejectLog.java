package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;

/**
 * Logs rejected events without letting a flood of them flood the log: the first ten, then every
 * 10,000th, each line naming the metric that counts them all. The event's text (and the reason,
 * which may quote it) is escaped, so that a hostile record cannot forge log lines or send terminal
 * escapes to whoever reads the log.
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
            log.warn(
                    "{} ({}); {} {} so far, see metric {}: {}",
                    what,
                    escape(String.valueOf(reason), Integer.MAX_VALUE),
                    count,
                    verb,
                    metric,
                    escape(String.valueOf(event), MAX_CHARS));
        }
    }

    /** How much of an event a line shows, escaped. */
    static final int MAX_CHARS = 200;

    /**
     * {@code text} with its backslashes and every control, format (such as the bidirectional
     * overrides) and line or paragraph separator character escaped as in a Java string literal (a
     * backslash and n, a backslash and u001b), cut to at most {@code max} characters (never inside
     * an escape) followed by "..." when longer: a record cannot write a line of its own into the
     * log, nor recolour it.
     */
    static String escape(String text, int max) {
        StringBuilder s = new StringBuilder(Math.min(text.length(), max) + 8);
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            String e = escaped(c);
            if (s.length() + e.length() > max) {
                return s.append("...").toString();
            }
            s.append(e);
            i += Character.charCount(c);
        }
        return s.toString();
    }

    private static String escaped(int c) {
        switch (c) {
            case '\\':
                return "\\\\";
            case '\n':
                return "\\n";
            case '\r':
                return "\\r";
            case '\t':
                return "\\t";
            default:
                break;
        }
        switch (Character.getType(c)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SURROGATE: // unpaired
                return String.format("\\u%04x", c);
            default:
                return new String(Character.toChars(c));
        }
    }
}
