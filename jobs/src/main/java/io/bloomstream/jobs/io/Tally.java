package io.bloomstream.jobs.io;

import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/**
 * Passes records through and counts them in a job accumulator, for the end-of-job summary. The
 * count is kept in checkpoints ({@link RunCounts}): a run that recovers its input from a killed
 * run's checkpoint counts on from there.
 */
public final class Tally<T> extends RichMapFunction<T, T> implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** Accumulator of records read. */
    public static final String IN = "records-in";

    /** Accumulator of records written to the main output. */
    public static final String OUT = "records-out";

    /** Accumulator of records rejected. */
    public static final String REJECTED = "records-rejected";

    private final String name;
    private final RunCounts counts;
    private transient LongCounter counter;

    /** Counts into the accumulator {@code name}. */
    public Tally(String name) {
        this.name = name;
        this.counts = new RunCounts(name);
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        counts.initialize(ctx, getRuntimeContext());
    }

    @Override
    public void open(OpenContext ctx) {
        counts.open(getRuntimeContext());
        counter = counts.counter(name);
    }

    @Override
    public T map(T value) {
        counter.add(1);
        return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        counts.snapshot(Map.of());
    }

    /** The accumulator's total in a finished job (0 when absent). */
    public static long total(JobExecutionResult result, String name) {
        Object v = result.getAccumulatorResult(name);
        return v instanceof Long ? (Long) v : 0;
    }
}
