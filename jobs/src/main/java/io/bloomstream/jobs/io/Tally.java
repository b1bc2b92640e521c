package io.bloomstream.jobs.io;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/** Passes records through and counts them in a job accumulator, for the end-of-job summary. */
public final class Tally<T> extends RichMapFunction<T, T> {

    private static final long serialVersionUID = 1L;

    /** Accumulator of records read. */
    public static final String IN = "records-in";

    /** Accumulator of records written to the main output. */
    public static final String OUT = "records-out";

    /** Accumulator of records rejected. */
    public static final String REJECTED = "records-rejected";

    private final String name;
    private transient LongCounter counter;

    /** Counts into the accumulator {@code name}. */
    public Tally(String name) {
        this.name = name;
    }

    @Override
    public void open(OpenContext ctx) {
        counter = new LongCounter();
        getRuntimeContext().addAccumulator(name, counter);
    }

    @Override
    public T map(T value) {
        counter.add(1);
        return value;
    }

    /** The accumulator's total in a finished job (0 when absent). */
    public static long total(JobExecutionResult result, String name) {
        Object v = result.getAccumulatorResult(name);
        return v instanceof Long ? (Long) v : 0;
    }
}
