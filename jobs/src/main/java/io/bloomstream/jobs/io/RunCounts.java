package io.bloomstream.jobs.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/**
 * The summary's counters of one function (records read, written, rejected, and why), as job
 * accumulators that a checkpoint keeps: a run that recovers a killed run's input from its
 * checkpoint counts on from what the killed run had counted up to it, so that the summary covers
 * the whole input, as its outputs do.
 *
 * <p>The counts of a checkpoint belong to one input: its <em>scope</em>, the job parameter {@value
 * #SCOPE} (the file source's id, kept by a recovery; a new one for each new input and for Kafka,
 * see {@code IoOptions#countScope}). A restore of another scope starts from zero: day 2's summary
 * does not add day 1's records. In the checkpoint each count is one string, {@code
 * "scope<TAB>count<TAB>name"} (a name may hold a tab), in operator list state {@value #STATE}; on a
 * rescale the entries are spread over the subtasks and each adds what it gets, so the job's totals
 * stay the same.
 *
 * <p>For each counter {@code name} the accumulator {@code name + }{@value #RESUMED} holds the part
 * of its total that was restored.
 */
public final class RunCounts implements java.io.Serializable {

    private static final long serialVersionUID = 1L;

    /** The job parameter that names the counts' scope. */
    public static final String SCOPE = "bloomstream.counts-scope";

    /** The name of the operator list state that holds the counts. */
    static final String STATE = "bloomstream-run-counts";

    /** The suffix of the accumulator of a counter's restored part. */
    public static final String RESUMED = ".resumed";

    private final List<String> names;
    private transient Map<String, Long> restored;
    private transient Map<String, LongCounter> counters;
    private transient ListState<String> state;
    private transient String scope;

    /** Counters named {@code names} (accumulator names). */
    public RunCounts(String... names) {
        this.names = List.of(names);
    }

    /**
     * Reads the counts of the restored checkpoint that belong to this run's scope; call from the
     * function's {@code initializeState}.
     */
    public void initialize(FunctionInitializationContext ctx, RuntimeContext runtime)
            throws Exception {
        state =
                ctx.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>(STATE, Types.STRING));
        scope = runtime.getGlobalJobParameters().get(SCOPE);
        restored = new LinkedHashMap<>();
        if (ctx.isRestored() && scope != null) {
            for (String entry : state.get()) {
                String[] f = entry.split("\t", 3);
                if (f.length == 3 && f[0].equals(scope)) {
                    restored.merge(f[2], Long.parseLong(f[1]), Long::sum);
                }
            }
        }
    }

    /**
     * Registers the accumulators, each starting at its restored count; call from {@code open}
     * (after {@link #initialize}, or alone when the function is not checkpointed).
     */
    public void open(RuntimeContext runtime) {
        counters = new LinkedHashMap<>();
        for (String name : names) {
            long before = restored == null ? 0 : restored.getOrDefault(name, 0L);
            LongCounter c = new LongCounter(before);
            runtime.addAccumulator(name, c);
            runtime.addAccumulator(name + RESUMED, new LongCounter(before));
            counters.put(name, c);
        }
    }

    /** The counter {@code name}. */
    public LongCounter counter(String name) {
        return counters.get(name);
    }

    /** The counts restored, by name (empty when nothing of this scope was). */
    public Map<String, Long> restored() {
        return restored == null ? Map.of() : restored;
    }

    /**
     * Writes the counts and {@code extra} (more counts by name, such as reasons) into the
     * checkpoint; call from the function's {@code snapshotState}.
     */
    public void snapshot(Map<String, Long> extra) throws Exception {
        List<String> entries = new ArrayList<>();
        if (scope != null) {
            counters.forEach((name, c) -> entries.add(entry(name, c.getLocalValue())));
            extra.forEach((name, count) -> entries.add(entry(name, count)));
        }
        state.update(entries);
    }

    private String entry(String name, long count) {
        return scope + "\t" + count + "\t" + name;
    }

    /** The restored part of the accumulator {@code name} of a finished job (0 when none). */
    public static long resumed(org.apache.flink.api.common.JobExecutionResult result, String name) {
        return Tally.total(result, name + RESUMED);
    }
}
