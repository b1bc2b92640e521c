package io.bloomstream.flink.dedup;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The exact reference model of {@link FirstBy#EVENT_TIME}, written from its specification (Flink's
 * keep-first deduplication on event time, with the operator's lateness rule): an event with t + A
 * &lt;= W (A the allowed lateness, W the largest watermark so far) is late, unjudged and
 * unremembered; every other event waits until a watermark at or past its time, and the events a
 * watermark releases are judged per key in order of event time, then of arrival, each against the
 * occurrences of its id that passed before it.
 *
 * <p>Judging: without retention an occurrence passes if and only if none passed before it. With
 * retention R and generation length L (bucket granularity, as {@link DedupModel} states it): it
 * <em>must</em> be dropped when a passed occurrence lies at |t - t'| &lt; R, it is a clear first
 * when none lies within R + L, and in between either outcome is allowed. A clear first must pass in
 * exact mode; without it, it may be dropped as a false positive.
 */
final class EarliestModel {

    /** One event: its key, id, event time and arrival number. */
    record Event(long seq, String key, String id, long time) {
        String value() {
            return key + "," + id;
        }

        /** As the tests print records: value@timestamp. */
        String record() {
            return value() + "@" + time;
        }
    }

    /** What the operator may do with one judged event. */
    enum Expect {
        /** A clear first in exact mode: must pass. */
        PASS,
        /** A clear first without exact mode: passes, or is dropped as a false positive. */
        FIRST,
        DUPLICATE,
        /** Within one generation past the retention: either. */
        EITHER
    }

    private final long retention;
    private final long generationMillis;
    private final long lateness;
    private final boolean exact;
    private long watermark = Long.MIN_VALUE;
    private final List<Event> waiting = new ArrayList<>();
    private final Map<String, Map<String, List<Long>>> passed = new HashMap<>();

    EarliestModel(DedupConfig config) {
        this.retention = config.hasRetention() ? config.retentionMillis() : 0;
        this.generationMillis = config.hasRetention() ? config.generationMillis() : 0;
        this.lateness = config.allowedLateness().toMillis();
        this.exact = config.exact();
    }

    long watermark() {
        return watermark;
    }

    /** An arriving event: false when it is late (then forgotten), else it waits. */
    boolean arrive(Event e) {
        if (watermark != Long.MIN_VALUE && e.time() + lateness <= watermark) {
            return false;
        }
        waiting.add(e);
        return true;
    }

    /**
     * A watermark: the events it releases (time at or before the largest watermark), in the order
     * the operator judges them within a key (time, then arrival).
     */
    List<Event> watermark(long w) {
        watermark = Math.max(watermark, w);
        List<Event> released = new ArrayList<>();
        for (Iterator<Event> it = waiting.iterator(); it.hasNext(); ) {
            Event e = it.next();
            if (e.time() <= watermark) {
                released.add(e);
                it.remove();
            }
        }
        released.sort(Comparator.comparingLong(Event::time).thenComparingLong(Event::seq));
        return released;
    }

    int waiting() {
        return waiting.size();
    }

    /** What the operator may do with a released event, given what passed before it. */
    Expect expect(Event e) {
        boolean must = false;
        boolean near = false;
        for (long p : passed.getOrDefault(e.key(), Map.of()).getOrDefault(e.id(), List.of())) {
            long distance = Math.abs(e.time() - p);
            must |= retention == 0 || distance < retention;
            near |= distance < retention + generationMillis;
        }
        if (must) {
            return Expect.DUPLICATE;
        }
        if (near) {
            return Expect.EITHER;
        }
        return exact ? Expect.PASS : Expect.FIRST;
    }

    /** Records the outcome of a released event. */
    void record(Event e, boolean didPass) {
        if (didPass) {
            passed.computeIfAbsent(e.key(), k -> new HashMap<>())
                    .computeIfAbsent(e.id(), k -> new ArrayList<>())
                    .add(e.time());
        }
    }
}
