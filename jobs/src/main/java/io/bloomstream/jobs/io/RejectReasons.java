package io.bloomstream.jobs.io;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.Accumulator;

/**
 * Why records were rejected, counted per reason (a job accumulator, {@value #NAME}): at most
 * {@value #MAX_REASONS} distinct reasons, the rest counted under {@value #OTHER}. A run that
 * rejected every record names them ({@code Commands}); {@link First} stops a stream whose first
 * records all miss the same field.
 */
public final class RejectReasons implements Accumulator<String, TreeMap<String, Long>> {

    private static final long serialVersionUID = 1L;

    /** The accumulator's name. */
    public static final String NAME = "reject-reasons";

    /** How many distinct reasons are kept. */
    public static final int MAX_REASONS = 8;

    /** The reason that counts the rest. */
    public static final String OTHER = "other reasons";

    private TreeMap<String, Long> counts = new TreeMap<>();

    @Override
    public void add(String reason) {
        add(reason, 1);
    }

    /** Counts {@code count} records rejected for {@code reason}. */
    public void add(String reason, long count) {
        String key = counts.containsKey(reason) || counts.size() < MAX_REASONS ? reason : OTHER;
        counts.merge(key, count, Long::sum);
    }

    @Override
    public TreeMap<String, Long> getLocalValue() {
        return counts;
    }

    @Override
    public void resetLocal() {
        counts = new TreeMap<>();
    }

    @Override
    public void merge(Accumulator<String, TreeMap<String, Long>> other) {
        for (Map.Entry<String, Long> e : other.getLocalValue().entrySet()) {
            String key =
                    counts.containsKey(e.getKey()) || counts.size() < MAX_REASONS
                            ? e.getKey()
                            : OTHER;
            counts.merge(key, e.getValue(), Long::sum);
        }
    }

    @Override
    public RejectReasons clone() {
        RejectReasons c = new RejectReasons();
        c.counts = new TreeMap<>(counts);
        return c;
    }

    /** The reasons of a finished job, by count (empty when none was recorded). */
    @SuppressWarnings("unchecked")
    public static Map<String, Long> of(JobExecutionResult result) {
        Object v = result.getAccumulatorResult(NAME);
        return v instanceof Map ? (Map<String, Long>) v : Map.of();
    }

    /** Whether {@code reason} is a field that a record lacks: a flag may name the wrong field. */
    static boolean missingField(String reason) {
        return reason.startsWith("missing field '") || reason.startsWith("missing key field '");
    }

    /**
     * Watches the first {@value #RECORDS} records of one parser: when all of them were rejected for
     * the same missing field, the field is more likely mistyped than missing from every record, and
     * a stream would reject everything it ever reads; the caller stops the job.
     */
    public static final class First implements Serializable {
        private static final long serialVersionUID = 1L;

        /** How many records are watched. */
        public static final int RECORDS = 1000;

        private long seen;
        private String reason;
        private boolean passed;

        /** Notes a record that was not rejected. */
        public void accepted() {
            if (seen < RECORDS) {
                seen++;
                passed = true;
            }
        }

        /**
         * Notes a rejected record; the reason to stop when it is the last of the first {@value
         * #RECORDS}, all rejected for the same missing field, else null.
         */
        public String rejected(String why) {
            if (seen >= RECORDS) {
                return null;
            }
            seen++;
            if (seen == 1) {
                reason = why;
            } else if (!why.equals(reason)) {
                passed = true; // mixed reasons: not one mistyped field
            }
            if (seen == RECORDS && !passed && missingField(reason)) {
                return "the first "
                        + RECORDS
                        + " records read were all rejected: "
                        + reason
                        + " (a mistyped field flag?); stopping rather than rejecting every"
                        + " record";
            }
            return null;
        }
    }
}
