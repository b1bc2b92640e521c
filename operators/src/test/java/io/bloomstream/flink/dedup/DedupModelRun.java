package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.dedup.DedupModel.Expect;
import io.bloomstream.flink.dedup.DedupModel.Outcome;
import io.bloomstream.flink.dedup.DedupScenario.Base;
import io.bloomstream.flink.dedup.DedupScenario.Change;
import io.bloomstream.flink.dedup.DedupScenario.Mode;
import io.bloomstream.flink.dedup.DedupScenario.Restore;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;

/**
 * Runs one {@link DedupScenario} against the real operator (one harness per subtask, each event
 * routed to the subtask owning its key group) and the {@link DedupModel} side by side, checking
 * every event's outcome as it happens.
 */
final class DedupModelRun
        extends DedupModelRunBase<KeyedOneInputStreamOperatorTestHarness<String, String, String>> {

    private final Map<String, Set<Integer>> floodIds = new HashMap<>();

    DedupModelRun(DedupScenario scenario, Backend backend) {
        super(scenario, backend, scenario.base());
    }

    @Override
    protected void openSubtasks() throws Exception {
        for (int i = 0; i < scenario.parallelism(); i++) {
            var h = harness(base, scenario.parallelism(), i);
            h.open();
            h.setProcessingTime(now);
            subtasks.add(h);
        }
    }

    @Override
    protected void checkEndOfInput() throws Exception {
        if (base.mode() == Mode.EVENT_TIME) {
            for (var h : subtasks) {
                assertThat(DedupHarness.keysWithState(h))
                        .as("keys with state after the final watermark%s", where())
                        .isZero();
                assertThat(metrics.get(h).number(DedupMetrics.ALLOCATED_PAGES))
                        .as("allocated pages after the final watermark%s", where())
                        .isZero();
            }
        }
    }

    /**
     * Floods a key with ids f{from}... A fixed filter past its capacity may exceed its rate, so
     * under fixed growth a key gets at most (the ids one generation is sized for, {@link
     * DedupConfig#generationItems}) - {@link DedupScenario#IDS} distinct flood ids over the run
     * (the small alphabet takes the rest): no generation of it then holds more than its capacity,
     * and the false-positive bound stays valid.
     */
    @Override
    protected void flood(DedupScenario.Flood f) throws Exception {
        String key = "k" + f.key();
        Set<Integer> ids = floodIds.computeIfAbsent(key, k -> new HashSet<>());
        for (int i = f.from(); i < f.from() + f.count(); i++) {
            if (base.fixed()
                    && !ids.contains(i)
                    && ids.size()
                            >= base.config().generationItems(base.expectedItems())
                                    - DedupScenario.IDS) {
                continue;
            }
            ids.add(i);
            event(f.key(), "f" + i, now);
        }
    }

    @Override
    protected void clockMoved() throws Exception {
        for (var h : subtasks) {
            h.setProcessingTime(now);
            assertNoRecords(h, "processing time " + now);
        }
    }

    @Override
    protected void watermark(long wm) throws Exception {
        model.watermark(wm);
        for (var h : subtasks) {
            h.processWatermark(wm);
            assertNoRecords(h, "watermark " + wm);
        }
        checkAllocatedPages("watermark " + wm);
    }

    /**
     * Each subtask's {@code bloomAllocatedPages} counts the pages of the keys it has read or
     * written since its start: never negative, never more than the pages in its keyed state.
     */
    private void checkAllocatedPages(String when) throws Exception {
        for (var h : subtasks) {
            long gauge = (long) metrics.get(h).number(DedupMetrics.ALLOCATED_PAGES);
            long inState = DedupHarness.pagesInState(h);
            check(
                    gauge >= 0 && gauge <= inState,
                    () -> "allocated pages " + gauge + " with " + inState + " in state at " + when);
        }
    }

    @Override
    protected void event(int keyIndex, String id, Long timestamp) throws Exception {
        String key = "k" + keyIndex;
        String value = key + "," + id;
        Expect expect = model.expect(key, id, timestamp, now);
        var h = subtasks.get(owner(key, subtasks.size()));
        h.processElement(
                timestamp == null
                        ? new StreamRecord<>(value)
                        : new StreamRecord<>(value, timestamp));
        Outcome outcome = drainOne(h, value);
        trace.add("  -> " + value + " t=" + timestamp + " " + outcome);
        if (!DedupModel.allowed(expect, outcome)) {
            fail(
                    String.format(
                            Locale.ROOT,
                            "event %s at t=%s (now=%d, watermark=%d): expected %s, got %s%s",
                            value,
                            timestamp,
                            now,
                            model.watermark(),
                            expect,
                            outcome,
                            where()));
        }
        if (expect == Expect.EXACT_FIRST) {
            stats.exactFirsts++; // passed, checked above
        }
        if (expect == Expect.FIRST && counting) {
            stats.clearFirsts++;
            stats.expectedDrops += model.falsePositiveBound();
            if (outcome == Outcome.DUPLICATE) {
                stats.falseDrops++;
            }
        }
        model.record(key, id, timestamp, now, outcome);
    }

    /** The one record an event produced: exactly one, in exactly one of the four outputs. */
    private Outcome drainOne(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h, String value) {
        DedupHarness.judge(h); // the event's bundle, as a barrier would
        List<Outcome> outcomes = new ArrayList<>();
        for (Object o : drain(h.getOutput())) {
            if (o instanceof StreamRecord<?> r) {
                check(value.equals(r.getValue()), () -> "main output " + r + " for " + value);
                outcomes.add(Outcome.PASSED);
            }
        }
        collect(h, DedupHarness.DUPLICATES, Outcome.DUPLICATE, value, outcomes);
        collect(h, DedupHarness.LATE, Outcome.LATE, value, outcomes);
        collect(h, DedupHarness.REJECTED, Outcome.REJECTED, value, outcomes);
        check(outcomes.size() == 1, () -> "outputs of event " + value + ": " + outcomes);
        return outcomes.get(0);
    }

    private void collect(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            OutputTag<String> tag,
            Outcome outcome,
            String value,
            List<Outcome> outcomes) {
        Queue<StreamRecord<String>> side = h.getSideOutput(tag);
        if (side == null) {
            return;
        }
        for (Object o : drain(side)) {
            check(
                    value.equals(((StreamRecord<?>) o).getValue()),
                    () -> tag.getId() + " output " + o + " for " + value);
            outcomes.add(outcome);
        }
    }

    private static List<Object> drain(Queue<?> queue) {
        List<Object> items = new ArrayList<>(queue);
        queue.clear();
        return items;
    }

    private void assertNoRecords(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h, String after) {
        DedupHarness.judge(h);
        for (Object o : drain(h.getOutput())) {
            check(!(o instanceof StreamRecord), () -> "main output " + o + " after " + after);
        }
        for (OutputTag<String> tag :
                List.of(DedupHarness.DUPLICATES, DedupHarness.LATE, DedupHarness.REJECTED)) {
            Queue<StreamRecord<String>> side = h.getSideOutput(tag);
            if (side != null) {
                List<Object> records = drain(side);
                check(records.isEmpty(), () -> tag.getId() + " " + records + " after " + after);
            }
        }
    }

    // ---------------------------------------------------------------- restores

    @Override
    protected void restore(Restore r) throws Exception {
        long keysWithState = 0;
        OperatorSubtaskState[] parts = new OperatorSubtaskState[subtasks.size()];
        checkpointId++;
        for (int i = 0; i < parts.length; i++) {
            keysWithState += DedupHarness.keysWithState(subtasks.get(i));
            parts[i] = subtasks.get(i).snapshot(checkpointId, now);
        }
        int oldParallelism = subtasks.size();
        closeAll();
        OperatorSubtaskState merged = AbstractStreamOperatorTestHarness.repackageState(parts);
        Base changed = changed(base, r.change(), r.value());
        if (changed == null || r.change() == Change.NONE || r.change().sound()) {
            Base next = changed == null ? base : changed;
            subtasks = restoreAll(merged, oldParallelism, r.parallelism(), next);
            if (!next.equals(base)) {
                counting = false;
                base = next;
                model.changeConfig(next.config());
            }
        } else {
            List<String> failures = tryRestore(merged, oldParallelism, r.parallelism(), changed);
            if (keysWithState > 0) {
                assertThat(failures)
                        .as(
                                "restore with changed %s (%s -> %s) must fail%s",
                                r.change(), base, changed, where())
                        .isNotEmpty();
            }
            for (String message : failures) {
                checkNamesField(message, r.change(), base, changed);
            }
            // The job is restarted with its old config from the same savepoint.
            subtasks = restoreAll(merged, oldParallelism, r.parallelism(), base);
        }
    }

    private List<KeyedOneInputStreamOperatorTestHarness<String, String, String>> restoreAll(
            OperatorSubtaskState merged, int oldParallelism, int parallelism, Base config)
            throws Exception {
        List<KeyedOneInputStreamOperatorTestHarness<String, String, String>> next =
                new ArrayList<>();
        for (int i = 0; i < parallelism; i++) {
            var h = harness(config, parallelism, i);
            next.add(h);
            h.initializeState(
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(
                            merged, DedupHarness.MAX_PARALLELISM, oldParallelism, parallelism, i));
            h.open();
            // A restored task sees the clock and, once the sources resume, the last watermark.
            h.setProcessingTime(now);
            if (model.watermark() != Long.MIN_VALUE) {
                h.processWatermark(model.watermark());
            }
            assertNoRecords(h, "restore");
        }
        return next;
    }

    /** Restores with an unsound config; returns the failures' messages (with their causes). */
    private List<String> tryRestore(
            OperatorSubtaskState merged, int oldParallelism, int parallelism, Base config)
            throws Exception {
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < parallelism; i++) {
            var h = harness(config, parallelism, i);
            try {
                h.initializeState(
                        AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                merged,
                                DedupHarness.MAX_PARALLELISM,
                                oldParallelism,
                                parallelism,
                                i));
                h.open();
            } catch (Exception e) {
                failures.add(messages(e));
            } finally {
                try {
                    h.close();
                } catch (Exception ignored) {
                    // a harness that failed to open may not close cleanly
                }
            }
        }
        return failures;
    }

    static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            sb.append(c.getClass().getSimpleName())
                    .append(": ")
                    .append(c.getMessage())
                    .append('\n');
        }
        return sb.toString();
    }

    /** The failure names the field and both values (the savepoint's and the new one). */
    static void checkNamesField(String message, Change change, Base old, Base changed) {
        String lower = message.toLowerCase(Locale.ROOT);
        switch (change) {
            case SEED:
                assertThat(lower).contains("seed");
                assertThat(message)
                        .contains(Long.toString(old.seed()))
                        .contains(Long.toString(changed.seed()));
                break;
            case TIME_DOMAIN:
                assertThat(lower).containsAnyOf("timedomain", "time domain", "time_domain");
                assertThat(message).contains("EVENT_TIME").contains("PROCESSING_TIME");
                break;
            case RETENTION_ON_OFF:
                {
                    assertThat(lower).contains("retention");
                    long r =
                            old.mode() == Mode.NO_RETENTION
                                    ? changed.retentionMillis()
                                    : old.retentionMillis();
                    assertThat(message)
                            .containsAnyOf(
                                    java.time.Duration.ofMillis(r).toString(), Long.toString(r));
                    break;
                }
            case SHARDS:
                assertThat(lower).contains("shard");
                assertThat(message)
                        .contains(Integer.toString(old.shards()))
                        .contains(Integer.toString(changed.shards()));
                break;
            default:
                throw new AssertionError(change);
        }
    }

    /** The base with one field changed, or null when the change does not apply to it. */
    static Base changed(Base b, Change change, int v) {
        boolean retention = b.mode() != Mode.NO_RETENTION;
        DedupScenario.Copy c = b.copy();
        switch (change) {
            case NONE:
                return null;
            case EXPECTED_ITEMS:
                c.expectedItems = pick(b.expectedItems(), 50L, 200L, 1000L, 2000L, v);
                break;
            case FPP:
                c.fppPercent = (int) pick(b.fppPercent(), 1, 5, 10, 20, v);
                break;
            case PAGE_BITS:
                c.pageBits =
                        (int)
                                pick(
                                        b.pageBits(),
                                        FilterSpec.AUTO_PAGE_BITS,
                                        FilterSpec.CLASSIC,
                                        512,
                                        2048,
                                        v);
                break;
            case GROWTH:
                c.fixed = !b.fixed();
                break;
            case RETENTION:
                if (!retention) {
                    return null;
                }
                long r = b.retentionMillis();
                c.retentionMillis = pick(r, Math.max(1, r / 2), r * 2, r + 1, 10, v);
                break;
            case GENERATIONS:
                if (!retention) {
                    return null;
                }
                c.generations = (int) pick(b.generations(), 2, 3, 4, 8, v);
                break;
            case ALLOWED_LATENESS:
                if (!retention) {
                    return null;
                }
                c.latenessMillis = pick(b.latenessMillis(), 0, 10, 50, 200, v);
                break;
            case EXACT:
                c.exact = !b.exact();
                break;
            case SEED:
                c.seed = b.seed() + 1 + v;
                break;
            case TIME_DOMAIN:
                if (!retention) {
                    return null;
                }
                c.mode = b.mode() == Mode.EVENT_TIME ? Mode.PROCESSING_TIME : Mode.EVENT_TIME;
                break;
            case RETENTION_ON_OFF:
                c.mode = retention ? Mode.NO_RETENTION : Mode.EVENT_TIME;
                c.retentionMillis = retention ? b.retentionMillis() : 100 + v;
                break;
            case SHARDS:
                if (!b.global()) {
                    return null;
                }
                c.shards = b.shards() + 1 + v;
                break;
            default:
                throw new AssertionError(change);
        }
        return c.build();
    }

    /** The v-th of four candidates, skipping the current value. */
    private static long pick(long current, long a, long b, long c, long d, int v) {
        long[] candidates = {a, b, c, d};
        long value = candidates[v % 4];
        return value == current ? candidates[(v + 1) % 4] : value;
    }

    // ---------------------------------------------------------------- harnesses

    private KeyedOneInputStreamOperatorTestHarness<String, String, String> harness(
            Base config, int parallelism, int subtask) throws Exception {
        HarnessMetrics m = new HarnessMetrics(DedupHarness.MAX_PARALLELISM, parallelism, subtask);
        var h =
                DedupHarness.create(
                        config.config(),
                        backend,
                        m,
                        config.expectedItems(),
                        config.global() ? config.shards() : 0);
        metrics.put(h, m);
        return h;
    }

    static int owner(String key, int parallelism) {
        int keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(key, DedupHarness.MAX_PARALLELISM);
        return KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup(
                DedupHarness.MAX_PARALLELISM, parallelism, keyGroup);
    }
}
