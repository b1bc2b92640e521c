package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.flink.dedup.DedupModel;
import io.bloomstream.flink.dedup.DedupModel.Expect;
import io.bloomstream.flink.dedup.DedupModel.Outcome;
import io.bloomstream.flink.dedup.DedupModelRunBase;
import io.bloomstream.flink.dedup.DedupScenario;
import io.bloomstream.flink.dedup.DedupScenario.Base;
import io.bloomstream.flink.dedup.DedupScenario.Change;
import io.bloomstream.flink.dedup.DedupScenario.Mode;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.time.Instant;
import java.util.Locale;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.Row;

/**
 * Runs one {@link DedupScenario} of the DataStream operator's model test through {@code
 * BLOOM_DEDUP} as Flink's planner makes it (one {@link PtfHarness} per subtask, each row routed to
 * the subtask owning its key group) and checks every row's outcome against the same {@link
 * DedupModel}, read from the function's metrics ({@code bloomPassed}, {@code bloomDuplicates},
 * {@code bloomLate}, {@code bloomRejected}: exactly one moves per row, and a row is returned
 * exactly when {@code bloomPassed} moves).
 *
 * <p>What SQL cannot express is mapped: processing-time scenarios are skipped by the caller; a row
 * without a timestamp (which a time attribute cannot hold) is not sent under event time and gets
 * the clock's time without retention; the config takes the scenario's expected items, fpp,
 * retention and generations (allowed lateness 0, growth scalable, page size automatic and the seed
 * the default, as SQL has no argument for them); restores change only what SQL arguments can
 * (expected items, fpp, retention, generations), other changes restore unchanged. A row at or
 * before the watermark that no counter counts and that is not returned was dropped by Flink 2.2
 * before the function (FLINK-39436): it is taken as LATE.
 */
final class BloomDedupModelRun extends DedupModelRunBase<PtfHarness> {

    static final int MAX_PARALLELISM = 128;
    private PtfHarness.Plan plan;
    private long seq;

    BloomDedupModelRun(DedupScenario scenario, Backend backend) {
        super(scenario, backend, sqlBase(scenario.base()));
    }

    /** The base as SQL can express it: scalable growth, automatic pages, default seed, per key. */
    static Base sqlBase(Base b) {
        return new Base(
                b.mode(),
                b.retentionMillis(),
                b.generations(),
                0,
                false,
                b.expectedItems(),
                b.fppPercent(),
                io.bloomstream.filter.FilterSpec.AUTO_PAGE_BITS,
                0,
                io.bloomstream.filter.Hasher.DEFAULT_SEED,
                0L); // the SQL function has no write-back cache
    }

    @Override
    protected void openSubtasks() throws Exception {
        plan = plan(base);
        for (int i = 0; i < scenario.parallelism(); i++) {
            PtfHarness h = harness(scenario.parallelism(), i);
            h.open();
            subtasks.add(h);
        }
    }

    @Override
    protected void checkEndOfInput() throws Exception {
        if (base.mode() == Mode.EVENT_TIME) {
            for (PtfHarness h : subtasks) {
                assertThat(metrics.get(h).number(DedupMetrics.ALLOCATED_PAGES))
                        .as("allocated pages after the final watermark%s", where())
                        .isZero();
            }
        }
    }

    @Override
    protected void watermark(long wm) throws Exception {
        model.watermark(wm);
        for (PtfHarness h : subtasks) {
            h.processWatermark(wm);
            check(
                    h.getOutput().stream().noneMatch(o -> o instanceof StreamRecord),
                    () -> "rows returned on watermark " + wm);
            h.getOutput().clear();
        }
    }

    @Override
    protected void event(int keyIndex, String id, Long timestamp) throws Exception {
        if (timestamp == null) {
            if (base.mode() == Mode.EVENT_TIME) {
                trace.add("  (no timestamp: not expressible in SQL, skipped)");
                return;
            }
            timestamp = now;
        }
        if (base.mode() == Mode.EVENT_TIME
                && timestamp == model.watermark()
                && LateRowsAcrossFlinkVersionsTest.flinkPassesLateRows()) {
            // The DataStream operator's model calls a row at the watermark late; the SQL function
            // judges it (Flink SQL's rule: late is below the watermark).
            trace.add("  (at the watermark: judged by SQL, late in the model: skipped)");
            return;
        }
        String key = "k" + keyIndex;
        Expect expect = model.expect(key, id, timestamp, now);
        RowData row = row(key, id, seq++, timestamp);
        PtfHarness h = subtasks.get(owner(row));
        HarnessMetrics m = metrics.get(h);
        long[] before = counts(m);
        h.processElement(row);
        long[] after = counts(m);
        Outcome outcome = null;
        int moved = 0;
        for (int i = 0; i < 4; i++) {
            if (after[i] != before[i]) {
                moved++;
                outcome = Outcome.values()[i];
            }
        }
        long returned = h.getOutput().stream().filter(o -> o instanceof StreamRecord).count();
        h.getOutput().clear();
        if (moved == 0
                && returned == 0
                && base.mode() == Mode.EVENT_TIME
                && timestamp <= model.watermark()) {
            // Flink 2.2 drops rows at or before the watermark before eval() (FLINK-39436).
            outcome = Outcome.LATE;
            moved = 1;
            before[indexOf(Outcome.LATE)]--;
        }
        Outcome o = outcome;
        int n = moved;
        check(
                n == 1 && after[indexOf(o)] == before[indexOf(o)] + 1,
                () -> "counters moved for " + key + "," + id + ": " + n);
        check(
                returned == (o == Outcome.PASSED ? 1 : 0),
                () -> returned + " rows returned for " + key + "," + id + " judged " + o);
        trace.add("  -> " + key + "," + id + " t=" + timestamp + " " + o);
        if (!DedupModel.allowed(expect, o)) {
            fail(
                    String.format(
                            Locale.ROOT,
                            "row %s,%s at t=%s (now=%d, watermark=%d): expected %s, got %s%s",
                            key,
                            id,
                            timestamp,
                            now,
                            model.watermark(),
                            expect,
                            o,
                            where()));
        }
        if (expect == Expect.FIRST && counting) {
            stats.clearFirsts++;
            stats.expectedDrops += model.falsePositiveBound();
            if (o == Outcome.DUPLICATE) {
                stats.falseDrops++;
            }
        }
        model.record(key, id, timestamp, now, o);
    }

    private static int indexOf(Outcome o) {
        return o == null ? 0 : o.ordinal();
    }

    /** The counters in the order of {@link Outcome}: passed, duplicate, late, rejected. */
    private static long[] counts(HarnessMetrics m) {
        return new long[] {
            m.count(DedupMetrics.PASSED),
            m.count(DedupMetrics.DUPLICATES),
            m.count(DedupMetrics.LATE),
            m.count(DedupMetrics.REJECTED)
        };
    }

    private RowData row(String key, String id, long seq, long timestamp) {
        GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), StringData.fromString(key));
        row.setField(plan.column("id"), StringData.fromString(id));
        row.setField(plan.column("seq"), seq);
        row.setField(plan.column("ts"), TimestampData.fromEpochMillis(timestamp));
        return row;
    }

    private int owner(RowData row) throws Exception {
        RowData key = plan.keySelector().getKey(row);
        return KeyGroupRangeAssignment.assignKeyToParallelOperator(
                key, MAX_PARALLELISM, subtasks.size());
    }

    // ---------------------------------------------------------------- restores

    @Override
    protected void restore(DedupScenario.Restore r) throws Exception {
        OperatorSubtaskState[] parts = new OperatorSubtaskState[subtasks.size()];
        checkpointId++;
        for (int i = 0; i < parts.length; i++) {
            parts[i] = subtasks.get(i).snapshot(checkpointId, now);
        }
        int oldParallelism = subtasks.size();
        closeAll();
        OperatorSubtaskState merged = AbstractStreamOperatorTestHarness.repackageState(parts);
        Base next = changed(base, r.change(), r.value());
        if (!next.equals(base)) {
            counting = false;
            base = next;
            model.changeConfig(next.config());
            plan = plan(next);
        }
        for (int i = 0; i < r.parallelism(); i++) {
            PtfHarness h = harness(r.parallelism(), i);
            subtasks.add(h);
            h.initializeState(
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(
                            merged, MAX_PARALLELISM, oldParallelism, r.parallelism(), i));
            h.open();
            if (model.watermark() != Long.MIN_VALUE) {
                h.processWatermark(model.watermark());
            }
            check(
                    h.getOutput().stream().noneMatch(o -> o instanceof StreamRecord),
                    () -> "rows returned on restore");
            h.getOutput().clear();
        }
    }

    /** The base after a change that SQL arguments can make; the base itself for others. */
    private static Base changed(Base b, Change change, int v) {
        boolean retention = b.mode() != Mode.NO_RETENTION;
        long items = b.expectedItems();
        int fpp = b.fppPercent();
        long r = b.retentionMillis();
        int g = b.generations();
        switch (change) {
            case EXPECTED_ITEMS:
                items = new long[] {50, 300, 1000, 5000}[v % 4];
                break;
            case FPP:
                fpp = new int[] {1, 5, 10, 20}[v % 4];
                break;
            case RETENTION:
                if (!retention) {
                    return b;
                }
                r = new long[] {10, 60, 150, 300}[v % 4];
                break;
            case GENERATIONS:
                if (!retention) {
                    return b;
                }
                g = 2 + v;
                break;
            default:
                return b; // not an argument of BLOOM_DEDUP: a plain restore
        }
        return new Base(b.mode(), r, g, 0, false, items, fpp, b.pageBits(), 0, b.seed(), 0L);
    }

    // ---------------------------------------------------------------- planning

    static PtfHarness.Plan plan(Base base) {
        return plan(base, java.util.Map.of());
    }

    /** Plans the call of {@code base} with the table options {@code options} set. */
    static PtfHarness.Plan plan(Base base, java.util.Map<String, String> options) {
        return plan(base, options, "");
    }

    /** Plans the call of {@code base}, with {@code moreArguments} (", name => value") appended. */
    static PtfHarness.Plan plan(
            Base base, java.util.Map<String, String> options, String moreArguments) {
        return plan(base, options, moreArguments, DedupTableFunction.class);
    }

    /**
     * Plans the call of {@code base}, with {@code moreArguments} appended, {@code BLOOM_DEDUP} the
     * process table function {@code function}.
     */
    static PtfHarness.Plan plan(
            Base base,
            java.util.Map<String, String> options,
            String moreArguments,
            Class<? extends org.apache.flink.table.functions.ProcessTableFunction<Row>> function) {
        StringBuilder call = new StringBuilder();
        call.append("SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k,")
                .append(" id_column => 'id', expected_items => ")
                .append(base.expectedItems())
                .append(", fpp => ")
                .append(String.format(Locale.ROOT, "%.2f", base.fppPercent() / 100.0));
        if (base.mode() == Mode.EVENT_TIME) {
            call.append(", retention => ")
                    .append(interval(base.retentionMillis()))
                    .append(", generations => ")
                    .append(base.generations())
                    .append(", on_time => DESCRIPTOR(ts), first_by => 'ARRIVAL'");
        }
        call.append(moreArguments).append(")");
        return PtfHarness.plan(
                (env, t) -> {
                    options.forEach((k, v) -> t.getConfig().set(k, v));
                    t.dropTemporarySystemFunction("BLOOM_DEDUP");
                    t.createTemporarySystemFunction("BLOOM_DEDUP", function);
                    t.createTemporaryView(
                            "events",
                            t.fromDataStream(
                                    env.fromData(Row.of("k", "i", 0L, Instant.EPOCH))
                                            .returns(
                                                    Types.ROW_NAMED(
                                                            new String[] {"k", "id", "seq", "ts"},
                                                            Types.STRING,
                                                            Types.STRING,
                                                            Types.LONG,
                                                            Types.INSTANT)),
                                    Schema.newBuilder()
                                            .column("k", DataTypes.STRING())
                                            .column("id", DataTypes.STRING())
                                            .column("seq", DataTypes.BIGINT())
                                            .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                                            .watermark("ts", "SOURCE_WATERMARK()")
                                            .build()));
                },
                call.toString());
    }

    private static String interval(long millis) {
        return String.format(
                Locale.ROOT, "INTERVAL '%d.%03d' SECOND", millis / 1000, millis % 1000);
    }

    private PtfHarness harness(int parallelism, int subtask) throws Exception {
        HarnessMetrics m = new HarnessMetrics(MAX_PARALLELISM, parallelism, subtask);
        PtfHarness h = new PtfHarness(plan, m.environment());
        h.setStateBackend(backend.create());
        h.setupOutput();
        metrics.put(h, m);
        return h;
    }
}
