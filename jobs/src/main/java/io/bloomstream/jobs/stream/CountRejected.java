package io.bloomstream.jobs.stream;

import io.bloomstream.jobs.io.RejectReasons;
import io.bloomstream.jobs.io.RunCounts;
import io.bloomstream.jobs.io.Tally;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/**
 * Counts lines on their way to {@code _rejected} that the parser did not reject ({@link
 * io.bloomstream.jobs.io.Rejects} counts its own), so that the summary's "rejected N" is the number
 * of lines in {@code _rejected}: accumulator {@link Tally#REJECTED}, and with a reason, {@link
 * RejectReasons} too (a run that rejected every record names it). Lines that are not records of the
 * input (a bad update command of {@code screen}) are also counted in {@value #COMMANDS}, which a
 * run's "every record read was rejected" leaves out. The count is kept in checkpoints ({@link
 * RunCounts}), as the parser's is.
 */
final class CountRejected extends RichMapFunction<String, String> implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** Accumulator of the rejected lines that are not records of the input. */
    static final String COMMANDS = "commands-rejected";

    private final String reason;
    private final RunCounts counts = new RunCounts(Tally.REJECTED);
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
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        counts.initialize(ctx, getRuntimeContext());
    }

    @Override
    public void open(OpenContext ctx) {
        counts.open(getRuntimeContext());
        rejected = counts.counter(Tally.REJECTED);
        if (reason != null) {
            reasons = new RejectReasons();
            long before = counts.restored().getOrDefault(Tally.REJECTED, 0L);
            if (before > 0) {
                reasons.add(reason, before);
            }
            getRuntimeContext().addAccumulator(RejectReasons.NAME, reasons);
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        counts.snapshot(java.util.Map.of());
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
