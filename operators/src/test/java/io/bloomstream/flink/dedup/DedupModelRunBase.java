package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.fail;

import io.bloomstream.flink.dedup.DedupScenario.Base;
import io.bloomstream.flink.dedup.DedupScenario.Restore;
import io.bloomstream.flink.dedup.DedupScenario.Stamp;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One randomized scenario run against the exact {@link DedupModel}, shared by the DataStream
 * operator's model test ({@link DedupModelRun}) and the SQL function's: the steps, the clock, the
 * trace for failure messages and the subtasks' harnesses. A subclass feeds events, watermarks and
 * restores to its own harnesses and compares each outcome with the model's.
 *
 * @param <H> the test harness of one subtask
 */
public abstract class DedupModelRunBase<H extends AutoCloseable> implements AutoCloseable {

    /** At most this many restores per scenario (RocksDB harnesses are slow to set up). */
    public static final int MAX_RESTORES = 3;

    /** False-positive statistics of the clear firsts of one run. */
    public static final class Stats {
        public long clearFirsts;
        public long falseDrops;
        public double expectedDrops;

        /** Clear firsts in exact mode: each must pass, none is counted above. */
        public long exactFirsts;

        public void add(Stats other) {
            clearFirsts += other.clearFirsts;
            exactFirsts += other.exactFirsts;
            falseDrops += other.falseDrops;
            expectedDrops += other.expectedDrops;
        }
    }

    protected final DedupScenario scenario;
    protected final Backend backend;
    protected final Stats stats = new Stats();
    protected final List<String> trace = new ArrayList<>();
    protected Base base;
    protected DedupModel model;
    protected List<H> subtasks = new ArrayList<>();

    /** The metrics of each harness, read back through its environment. */
    protected final Map<Object, HarnessMetrics> metrics = new IdentityHashMap<>();

    protected long now = DedupScenario.START;
    protected long checkpointId;
    protected int restores;

    /** False-positive counting stops at the first sound config change (fpp, sizes may change). */
    protected boolean counting = true;

    protected DedupModelRunBase(DedupScenario scenario, Backend backend, Base base) {
        this.scenario = scenario;
        this.backend = backend;
        this.base = base;
        this.model = new DedupModel(base.config());
    }

    public Stats stats() {
        return stats;
    }

    /** Runs every step, then the end of input; fails on the first deviation from the model. */
    public void run() throws Exception {
        openSubtasks();
        for (DedupScenario.Step step : scenario.steps()) {
            trace.add(step.toString());
            if (step instanceof DedupScenario.Event e) {
                now += e.advance();
                clockMoved();
                event(e.key(), id(e.id()), timestamp(e.stamp(), e.offset()));
            } else if (step instanceof DedupScenario.Burst b) {
                for (int id : b.ids()) {
                    event(b.key(), id(id), now - b.lag());
                }
            } else if (step instanceof DedupScenario.Flood f) {
                flood(f);
            } else if (step instanceof DedupScenario.Watermark w) {
                long wm = now - w.lag();
                if (wm > model.watermark()) {
                    watermark(wm);
                }
            } else if (step instanceof DedupScenario.Advance a) {
                now += a.millis();
                clockMoved();
            } else if (step instanceof Restore r && restores < MAX_RESTORES) {
                restores++;
                restore(r);
            }
        }
        trace.add("end of input: watermark Long.MAX_VALUE");
        watermark(Long.MAX_VALUE);
        checkEndOfInput();
    }

    /** The id of alphabet index {@code index}; a negative index is the empty (missing) id. */
    protected static String id(int index) {
        return index < 0 ? "" : "i" + index;
    }

    /** Opens one harness per subtask of the scenario's parallelism into {@link #subtasks}. */
    protected abstract void openSubtasks() throws Exception;

    /** Feeds one event to the subtask that owns its key and checks it against the model. */
    protected abstract void event(int keyIndex, String id, Long timestamp) throws Exception;

    /** Floods a key with ids f{from}... (the SQL function takes them all). */
    protected void flood(DedupScenario.Flood f) throws Exception {
        for (int i = f.from(); i < f.from() + f.count(); i++) {
            event(f.key(), "f" + i, now);
        }
    }

    /** Advances the model's and every subtask's watermark. */
    protected abstract void watermark(long wm) throws Exception;

    /** Snapshots every subtask and restores them under the step's config and parallelism. */
    protected abstract void restore(Restore r) throws Exception;

    /** The processing-time clock moved to {@link #now}; none by default. */
    protected void clockMoved() throws Exception {}

    /** Checks the state after the final watermark; nothing by default. */
    protected void checkEndOfInput() throws Exception {}

    /** An event's timestamp: around now, behind it, far in the future, or none. */
    protected Long timestamp(Stamp stamp, int offset) {
        switch (stamp) {
            case AROUND:
                return now + offset;
            case BEHIND:
                return now - 8L * Math.abs(offset);
            case FAR_FUTURE:
                return now + DedupScenario.FAR_FUTURE[Math.floorMod(offset, 2)];
            case NONE:
                return null;
            default:
                throw new AssertionError(stamp);
        }
    }

    protected void check(boolean ok, java.util.function.Supplier<String> what) {
        if (!ok) {
            fail(what.get() + where());
        }
    }

    /** Where the run is, for failure messages: the config and the trace so far. */
    protected String where() {
        int from = Math.max(0, trace.size() - 40);
        return "\n  backend "
                + backend
                + ", config "
                + base.config()
                + "\n  last steps:\n    "
                + String.join("\n    ", trace.subList(from, trace.size()));
    }

    protected void closeAll() throws Exception {
        for (H h : subtasks) {
            h.close();
        }
        subtasks = new ArrayList<>();
        for (HarnessMetrics m : metrics.values()) {
            m.close();
        }
        metrics.clear();
    }

    @Override
    public void close() throws Exception {
        closeAll();
    }
}
