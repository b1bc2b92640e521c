package io.bloomstream.jobs.stream;

import io.bloomstream.jobs.io.RejectReasons;
import io.bloomstream.jobs.io.Tally;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Counts lines on their way to {@code _rejected} that the parser did not reject ({@link
 * io.bloomstream.jobs.io.Rejects} counts its own), so that the summary's "rejected N" is the number
 * of lines in {@code _rejected}: accumulator {@link Tally#REJECTED}, and with a reason, {@link
 * RejectReasons} too (a run that rejected every record names it). Lines that are not records of the
 * input (a bad update command of {@code screen}) are also counted in {@value #COMMANDS}, which a
 * run's "every record read was rejected" leaves out.
 */
final class CountRejected extends RichMapFunction<String, String> {

    private static final long serialVersionUID = 1L;

    /** Accumulator of the rejected lines that are not records of the input. */
    static final String COMMANDS = "commands-rejected";

    private final String reason;
    private transient LongCounter rejected;
    private transient RejectReasons reasons;

    /**
     * Counts records rejected for {@code reason}; null for lines that are not records of the input
     * (counted in {@value #COMMANDS} by the caller's tally).
     */
    CountRejected(String reason) {
        this.reason = reason;
    }

    @Override
    public void open(OpenContext ctx) {
        rejected = new LongCounter();
        getRuntimeContext().addAccumulator(Tally.REJECTED, rejected);
        if (reason != null) {
            reasons = new RejectReasons();
            getRuntimeContext().addAccumulator(RejectReasons.NAME, reasons);
        }
    }

    @Override
    public String map(String line) {
        rejected.add(1);
        if (reasons != null) {
            reasons.add(reason);
        }
        return line;
    }
}
