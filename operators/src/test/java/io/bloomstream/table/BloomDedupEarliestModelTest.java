package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tests for {@link DedupTableFunction} with {@code first_by => 'EVENT_TIME'} (the default with
 * {@code on_time}) against an exact reference model of Flink's keep-first by a rowtime ({@code
 * ROW_NUMBER() OVER (PARTITION BY k, id ORDER BY ts) = 1}): per partition key and id, the row with
 * the smallest event time, the first to arrive on a tie, is returned when the watermark reaches its
 * time; a row below the watermark is late, dropped, and marks nothing.
 *
 * <p>Seeded random runs through the operator Flink's planner makes ({@link PtfHarness}, one per
 * subtask, rows routed by key group): disordered times, ids repeated across keys, late rows,
 * watermarks at random points, snapshots restored at random points onto another parallelism (rows
 * still waiting included), sometimes a watermark before any row reaches the restored tasks (the
 * timers then judge under the call the rows carry). In exact mode the returned rows must be the
 * model's at every watermark; without it a subset that misses at most a binomial bound of first
 * occurrences (false positives), and never a row the model does not return.
 */
class BloomDedupEarliestModelTest {

    private static final int MAX_PARALLELISM = 128;

    /** Whether this Flink passes late rows to the function (2.3 on), which then counts them. */
    private static final boolean PASSES_LATE_ROWS =
            LateRowsAcrossFlinkVersionsTest.flinkPassesLateRows();

    static List<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (Backend backend : Backend.values()) {
            for (long seed = 1; seed <= 2; seed++) {
                runs.add(Arguments.of(backend, seed, true));
            }
            runs.add(Arguments.of(backend, 11L, false));
        }
        return runs;
    }

    @ParameterizedTest(name = "{0} seed {1} exact {2}")
    @MethodSource("runs")
    void returnsTheEarliestRowOfEachIdWhenTheWatermarkPassesIt(
            Backend backend, long seed, boolean exact) throws Exception {
        new Run(backend, seed, exact).run();
    }

    /** The reference: Flink's keep-first by rowtime, per (key, id). */
    private static final class Model {
        final Map<String, long[]> candidate = new HashMap<>(); // key|id -> {time, seq}
        final Set<String> emitted = new HashSet<>();
        long watermark = Long.MIN_VALUE;
        int late;

        /** Whether the row is late; else it may become its id's candidate. */
        boolean add(String keyId, long time, long seq) {
            // Flink's rule: below the watermark. Flink 2.2 drops a row at the watermark too,
            // before the function sees it (FLINK-39436).
            if (watermark != Long.MIN_VALUE
                    && (time < watermark || (time == watermark && !PASSES_LATE_ROWS))) {
                late++;
                return true;
            }
            if (emitted.contains(keyId)) {
                return false;
            }
            long[] c = candidate.get(keyId);
            if (c == null || time < c[0]) {
                candidate.put(keyId, new long[] {time, seq});
            }
            return false;
        }

        /**
         * The seqs returned when the watermark advances to {@code wm}: timers fire on an advance
         * only, so a row at the watermark waits for the next one.
         */
        Set<Long> advance(long wm) {
            Set<Long> out = new TreeSet<>();
            if (wm <= watermark) {
                return out;
            }
            watermark = wm;
            return release();
        }

        /**
         * The seqs of candidates the watermark has reached: on an advance; and after a restore,
         * whose tasks start without a watermark, those at the watermark, whose timers the first
         * watermark of the restored tasks fires.
         */
        Set<Long> release() {
            Set<Long> out = new TreeSet<>();
            candidate
                    .entrySet()
                    .removeIf(
                            e -> {
                                if (e.getValue()[0] <= watermark) {
                                    out.add(e.getValue()[1]);
                                    emitted.add(e.getKey());
                                    return true;
                                }
                                return false;
                            });
            return out;
        }
    }

    private static final class Run {
        final Backend backend;
        final Random random;
        final boolean exact;
        final PtfHarness.Plan plan;
        final Model model = new Model();
        final List<PtfHarness> subtasks = new ArrayList<>();
        final Map<PtfHarness, HarnessMetrics> metrics = new HashMap<>();
        final List<String> trace = new ArrayList<>();
        final long seed;
        long seq;
        long maxTime;
        long checkpointId;
        int firsts;
        int missed;
        long lateCounted;

        Run(Backend backend, long seed, boolean exact) {
            this.backend = backend;
            this.seed = seed;
            this.random = new Random(seed);
            this.exact = exact;
            this.plan = plan(exact);
        }

        void run() throws Exception {
            int parallelism = 1 + random.nextInt(3);
            open(parallelism, null);
            int rows = 1000;
            for (int i = 0; i < rows; i++) {
                int step = random.nextInt(100);
                if (step < 8) {
                    watermark(Math.max(maxTime - random.nextInt(40), model.watermark));
                } else if (step < 9) {
                    restore(1 + random.nextInt(3));
                } else {
                    row();
                }
            }
            watermark(Long.MAX_VALUE);
            assertThat(model.candidate).as("rows left waiting in the model").isEmpty();
            for (PtfHarness h : subtasks) {
                lateCounted += metrics.get(h).count(DedupMetrics.LATE);
            }
            assertThat(lateCounted)
                    .as("late rows counted in %s", DedupMetrics.LATE)
                    .isEqualTo(PASSES_LATE_ROWS ? model.late : 0);
            if (!exact) {
                // Each first occurrence is dropped with probability at most fpp = 0.01 (ids well
                // below expected_items): P(Binomial(n, 0.01) > n/50 + 5) < 1e-6 for n <= 2000.
                assertThat(missed)
                        .as("first occurrences dropped of %d", firsts)
                        .isLessThanOrEqualTo(firsts / 50 + 5);
            }
            for (PtfHarness h : subtasks) {
                h.close();
            }
        }

        void row() throws Exception {
            String key = "k" + random.nextInt(3);
            String id = "i" + random.nextInt(60);
            long time = Math.max(0, maxTime + random.nextInt(30) - 20);
            if (random.nextInt(20) == 0 && model.watermark != Long.MIN_VALUE) {
                time = Math.max(0, model.watermark - 1 - random.nextInt(10)); // late
            }
            maxTime = Math.max(maxTime, time);
            long s = seq++;
            boolean late = model.add(key + "|" + id, time, s);
            trace.add(key + "," + id + " t=" + time + " seq=" + s + (late ? " late" : ""));
            GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
            row.setField(plan.column("k"), StringData.fromString(key));
            row.setField(plan.column("id"), StringData.fromString(id));
            row.setField(plan.column("seq"), s);
            row.setField(plan.column("ts"), TimestampData.fromEpochMillis(time));
            PtfHarness h = subtasks.get(owner(row));
            h.processElement(row);
            assertThat(returned(h)).as("rows returned on arrival, %s", where()).isEmpty();
        }

        void watermark(long wm) throws Exception {
            Set<Long> expected = model.advance(wm);
            Set<Long> got = new TreeSet<>();
            for (PtfHarness h : subtasks) {
                h.processWatermark(wm);
                got.addAll(returned(h));
            }
            trace.add("watermark " + wm + " -> " + got);
            compare(expected, got, "at watermark " + wm);
        }

        void compare(Set<Long> expected, Set<Long> got, String when) {
            if (exact) {
                assertThat(got).as("rows returned %s, %s", when, where()).isEqualTo(expected);
            } else {
                assertThat(expected).as("only the model's rows, %s", where()).containsAll(got);
                firsts += expected.size();
                missed += expected.size() - got.size();
            }
        }

        void restore(int parallelism) throws Exception {
            OperatorSubtaskState[] parts = new OperatorSubtaskState[subtasks.size()];
            checkpointId++;
            for (int i = 0; i < parts.length; i++) {
                parts[i] = subtasks.get(i).snapshot(checkpointId, 0);
            }
            int old = subtasks.size();
            for (PtfHarness h : subtasks) {
                lateCounted += metrics.get(h).count(DedupMetrics.LATE);
                h.close();
            }
            subtasks.clear();
            trace.add("restore " + old + " -> " + parallelism);
            open(parallelism, AbstractStreamOperatorTestHarness.repackageState(parts));
            if (random.nextBoolean() && maxTime > 0) {
                watermark(Math.max(model.watermark, maxTime - random.nextInt(10)));
            }
        }

        void open(int parallelism, OperatorSubtaskState merged) throws Exception {
            int old = merged == null ? 0 : parallelismOfLastRun;
            for (int i = 0; i < parallelism; i++) {
                HarnessMetrics m = new HarnessMetrics(MAX_PARALLELISM, parallelism, i);
                PtfHarness h = new PtfHarness(plan, m.environment());
                h.setStateBackend(backend.create());
                h.setupOutput();
                metrics.put(h, m);
                if (merged != null) {
                    h.initializeState(
                            AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                    merged, MAX_PARALLELISM, old, parallelism, i));
                }
                h.open();
                if (model.watermark != Long.MIN_VALUE) {
                    h.processWatermark(model.watermark);
                }
                subtasks.add(h);
            }
            parallelismOfLastRun = parallelism;
            Set<Long> got = new TreeSet<>();
            for (PtfHarness h : subtasks) {
                got.addAll(returned(h));
            }
            compare(merged == null ? Set.<Long>of() : model.release(), got, "on restore");
        }

        int parallelismOfLastRun;

        int owner(RowData row) throws Exception {
            return KeyGroupRangeAssignment.assignKeyToParallelOperator(
                    plan.keySelector().getKey(row), MAX_PARALLELISM, subtasks.size());
        }

        /** The seqs of the rows {@code h} returned since the last call. */
        List<Long> returned(PtfHarness h) {
            List<Long> out = new ArrayList<>();
            for (Object o : h.getOutput()) {
                if (o instanceof StreamRecord<?> r) {
                    out.add(((RowData) r.getValue()).getLong(2)); // k, id, seq, ts, rowtime
                }
            }
            h.getOutput().clear();
            return out;
        }

        String where() {
            int from = Math.max(0, trace.size() - 30);
            return "seed "
                    + seed
                    + ", last steps:\n  "
                    + String.join("\n  ", trace.subList(from, trace.size()));
        }
    }

    static PtfHarness.Plan plan(boolean exact) {
        String call =
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k, id_column => 'id',"
                        + " expected_items => 1000, fpp => 0.01, exact => "
                        + (exact ? "TRUE" : "FALSE")
                        + ", on_time => DESCRIPTOR(ts))";
        return PtfHarness.planOverEvents(true, true, call);
    }
}
