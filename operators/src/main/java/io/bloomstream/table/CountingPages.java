package io.bloomstream.table;

import io.bloomstream.filter.CounterPages;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.dataview.MapView;

/**
 * The counting SQL accumulator layout ({@value BloomAccumulator#VERSION_2_COUNTING}) of a {@link
 * BloomAccumulator}, for {@code BLOOM_COUNT_DISTINCT(..., 'retract')}: the adds, retractions and
 * merges of a counting accumulator, in state or in memory. The counters and pending retractions of
 * the pages are changed through a {@link CounterEdit} (one per operation); here are the logs.
 *
 * <p>An accumulator whose pages are in memory (a {@code MapView} of Flink's own class, as in the
 * local accumulators of two-phase aggregation and in batch) logs its adds and retractions as hashes
 * under {@link BloomAccumulator#ADD_LOG} and {@link BloomAccumulator#RETRACT_LOG} ({@code [n, h1,
 * h2, h1, h2, ...]}, 16 bytes an item instead of a page of counters shipped to the global
 * aggregation) and applies them, adds first, where it is merged or read. Flink keeps accumulators
 * in state with state-backed views, which apply each row at once. Stateless: every method works on
 * the accumulator it is given.
 */
final class CountingPages {

    /** The items a log holds before the accumulator applies it to its own counters. */
    static final int LOG_LIMIT = 4096;

    private CountingPages() {}

    /**
     * Whether the pages are in memory (a {@code MapView} of Flink's own class) rather than in
     * state: then adds and retractions are logged.
     */
    private static boolean inMemory(BloomAccumulator acc) {
        return acc.pages.getClass() == MapView.class;
    }

    /** Adds one occurrence of the item (h1, h2): logged in memory, applied in state. */
    static void increment(BloomAccumulator acc, long h1, long h2) throws Exception {
        if (inMemory(acc)) {
            log(acc, BloomAccumulator.ADD_LOG, h1, h2);
            return;
        }
        CounterEdit t = new CounterEdit(acc);
        t.add(h1, h2);
        t.flush();
    }

    /**
     * Removes one occurrence of the item (h1, h2): logged in memory, applied in state (see {@link
     * CounterEdit#retract}).
     */
    static void decrement(BloomAccumulator acc, long h1, long h2) throws Exception {
        if (inMemory(acc)) {
            log(acc, BloomAccumulator.RETRACT_LOG, h1, h2);
            return;
        }
        CounterEdit t = new CounterEdit(acc);
        t.retract(h1, h2);
        t.flush();
    }

    private static void log(BloomAccumulator acc, long key, long h1, long h2) throws Exception {
        long[] log = acc.pages.get(key);
        int n = log == null ? 0 : (int) log[0];
        if (log == null || log.length < 3 + 2 * n) {
            long[] grown = new long[Math.max(33, 2 * (1 + 2 * n) + 1)];
            if (log != null) {
                System.arraycopy(log, 0, grown, 0, 1 + 2 * n);
            }
            log = grown;
            acc.pages.put(key, log);
        }
        log[1 + 2 * n] = h1;
        log[2 + 2 * n] = h2;
        log[0] = n + 1;
        if (n + 1 >= LOG_LIMIT) {
            applyLogs(acc);
        }
    }

    /**
     * Applies the logged adds, then the logged retractions, to the accumulator's counters, then
     * cancels its pending retractions against them (an accumulator in memory, before its estimate
     * is read or when a log is full). Adds first: in a legal changelog every retraction still finds
     * its value. Does nothing to a plain accumulator or one in state.
     */
    static void applyLogs(BloomAccumulator acc) throws Exception {
        if (!acc.isCounting() || !inMemory(acc)) {
            return;
        }
        long[] adds = acc.pages.get(BloomAccumulator.ADD_LOG);
        long[] retractions = acc.pages.get(BloomAccumulator.RETRACT_LOG);
        if (adds != null || retractions != null) {
            acc.pages.remove(BloomAccumulator.ADD_LOG);
            acc.pages.remove(BloomAccumulator.RETRACT_LOG);
            CounterEdit t = new CounterEdit(acc);
            t.replay(adds, retractions);
            t.flush();
        }
        cancelOwnPending(acc);
    }

    /**
     * Merges a counting accumulator {@code other} (of the same shape, checked by the caller) into
     * {@code acc}. Into state: adds its counters and its logged adds to {@code acc}'s, then lets
     * its pending retractions cancel {@code acc}'s counters (never below zero, a sticky counter
     * stays; what they cannot cancel stays pending there), then applies its logged retractions:
     * every positive before any negative, so in a legal changelog each retraction finds its value.
     * In memory: adds its counters to {@code acc}'s and its pending retractions to {@code acc}'s
     * pending ones, and appends its logs to {@code acc}'s. A sticky counter of {@code other} makes
     * the sum sticky.
     */
    static void merge(BloomAccumulator acc, BloomAccumulator other) throws Exception {
        CounterEdit t = new CounterEdit(acc);
        List<Map.Entry<Long, long[]>> retractions = new ArrayList<>();
        long[] addLog = null;
        long[] retractLog = null;
        for (Map.Entry<Long, long[]> e : other.pages.entries()) {
            long key = e.getKey();
            if (key == BloomAccumulator.ADD_LOG) {
                addLog = e.getValue();
            } else if (key == BloomAccumulator.RETRACT_LOG) {
                retractLog = e.getValue();
            } else if (key < 0) {
                retractions.add(e);
            } else {
                acc.setBits += t.sum(key, e.getValue());
            }
        }
        acc.addItems(other.itemsAdded());
        if (inMemory(acc)) {
            // positives and negatives kept apart until the merge into state, which applies every
            // positive first: a pending retraction may wait for an add still in a log
            for (Map.Entry<Long, long[]> e : retractions) {
                t.sum(e.getKey(), e.getValue()); // counts no set bit: pending
            }
            t.flush();
            append(acc, BloomAccumulator.ADD_LOG, addLog);
            append(acc, BloomAccumulator.RETRACT_LOG, retractLog);
            return;
        }
        if (addLog != null) {
            t.replay(addLog, null);
        }
        for (Map.Entry<Long, long[]> e : retractions) {
            t.cancel(-1 - e.getKey(), e.getValue());
        }
        if (retractLog != null) {
            t.replay(null, retractLog);
        }
        t.flush();
    }

    /** Appends another accumulator's log to {@code acc}'s (in memory). */
    private static void append(BloomAccumulator acc, long key, long[] theirs) throws Exception {
        if (theirs == null) {
            return;
        }
        for (int i = 0, n = (int) theirs[0]; i < n; i++) {
            log(acc, key, theirs[1 + 2 * i], theirs[2 + 2 * i]);
        }
    }

    /**
     * Cancels the accumulator's own pending retractions against its own counters (in memory, before
     * its estimate is read): the difference of the two, cell by cell, does not change.
     */
    private static void cancelOwnPending(BloomAccumulator acc) throws Exception {
        List<Long> keys = new ArrayList<>();
        for (long key : acc.pages.keys()) {
            if (key < 0 && key != BloomAccumulator.ADD_LOG && key != BloomAccumulator.RETRACT_LOG) {
                keys.add(key);
            }
        }
        if (keys.isEmpty()) {
            return;
        }
        CounterEdit t = new CounterEdit(acc);
        for (long key : keys) {
            long[] pending = t.get(key);
            // what the counters cannot cancel comes back
            t.set(key, CounterPages.empty(acc.spec()));
            t.cancel(-1 - key, pending);
        }
        t.flush();
    }
}
