package io.bloomstream.flink.dedup;

import io.bloomstream.flink.TimeDomain;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The exact reference model of the dedup guarantee, written from its specification: it remembers
 * every occurrence that passed, per key and id, and says for each new occurrence which outcomes the
 * operator may produce. It never forgets and never errs, so the Bloom filter's only allowed
 * deviation from it is a false positive on a clear first occurrence.
 *
 * <p>The rule, per key: with retention R (no retention: R infinite) and generation length L, an
 * occurrence at t <em>must</em> be dropped when an earlier-arrived passed occurrence of the same id
 * lies at |t - t'| &lt; R; it is a <em>clear first</em> (passes unless a false positive) when no
 * passed occurrence lies at |t - t'| &lt; R + L; in between either outcome is allowed (bucket
 * granularity). Under event time, an event with t + A &lt;= W (A the allowed lateness, W the last
 * watermark) is late, and is neither judged nor remembered.
 *
 * <p>Exact mode ({@link DedupConfig#exact()}): the filter stands in front of the ids themselves, so
 * a clear first <em>must</em> pass ({@link Expect#EXACT_FIRST}: no false-positive allowance). The
 * operator keeps an exact entry only for an occurrence that passed while exact mode was on, so the
 * model remembers, per passed occurrence, whether it did ({@code Passed.exact}). While exact mode
 * is on, an occurrence must be dropped only for an earlier passed occurrence with an exact entry
 * within the retention; one that lies within the retention of passed occurrences without exact
 * entries only (passed before exact mode was switched on at a restore) may pass once more, as the
 * filter's "maybe" then finds no exact entry (exact mode prefers passing to dropping), and is
 * {@link Expect#EITHER}. Switched off, the filter alone judges again: every passed occurrence
 * counts, as without exact mode. The exact entries of an id passed in exact mode stay while it is
 * off, so switching it on again keeps their promise. A clear first is the same in both modes: no
 * passed occurrence at all lies within R + L, so no filter or exact entry can hold its id.
 */
public final class DedupModel {

    /** What the operator may do with one event. */
    public enum Expect {
        /** A clear first: main output, or dropped as a false positive (counted). */
        FIRST,
        /** A clear first in exact mode: must pass (the filter's false positives are caught). */
        EXACT_FIRST,
        /** A duplicate within the retention: must not pass. */
        DUPLICATE,
        /** Within one bucket past the retention: pass or drop, both fine. */
        EITHER,
        LATE,
        REJECTED,
        /** An empty id with a late timestamp: both rules apply, either side output is fine. */
        REJECTED_OR_LATE
    }

    /** Where the operator sent one event. */
    public enum Outcome {
        PASSED,
        DUPLICATE,
        LATE,
        REJECTED
    }

    /**
     * Whether the outcome is one the expectation allows (a false positive on FIRST is allowed, on
     * EXACT_FIRST not).
     */
    public static boolean allowed(Expect expect, Outcome outcome) {
        switch (expect) {
            case EXACT_FIRST:
                return outcome == Outcome.PASSED;
            case FIRST:
            case EITHER:
                return outcome == Outcome.PASSED || outcome == Outcome.DUPLICATE;
            case DUPLICATE:
                return outcome == Outcome.DUPLICATE;
            case LATE:
                return outcome == Outcome.LATE;
            case REJECTED:
                return outcome == Outcome.REJECTED;
            case REJECTED_OR_LATE:
                return outcome == Outcome.REJECTED || outcome == Outcome.LATE;
            default:
                throw new AssertionError(expect);
        }
    }

    /**
     * One passed occurrence. {@code mustWithin} is the smallest retention in force since it passed
     * (an id must be remembered only as long as every config since promised), {@code mayWithin} the
     * largest R + L since (an id may be remembered as long as any config since allowed), {@code
     * exact} whether it passed in exact mode (the operator then added its exact entry), {@code
     * forward} whether it is a refresh of reset on duplicate (a must only for later times).
     */
    private static final class Passed {
        final long time;
        final boolean exact;
        final boolean forward;
        long mustWithin;
        long mayWithin;

        Passed(long time, boolean exact, boolean forward, long mustWithin, long mayWithin) {
            this.time = time;
            this.exact = exact;
            this.forward = forward;
            this.mustWithin = mustWithin;
            this.mayWithin = mayWithin;
        }
    }

    private final Map<String, Map<String, List<Passed>>> passed = new HashMap<>();
    private DedupConfig config;
    private long watermark = Long.MIN_VALUE;

    /**
     * The longest generation L of every config so far: a key keeps the generation length recorded
     * in its state across a restore that changes R or G, so its buckets may still be that long.
     */
    private long longestGeneration;

    public DedupModel(DedupConfig config) {
        this.config = config;
        this.longestGeneration = generationMillis(config);
    }

    private static long generationMillis(DedupConfig config) {
        return config.hasRetention() ? config.generationMillis() : 0;
    }

    public DedupConfig config() {
        return config;
    }

    /** The last watermark the operator received. */
    public long watermark() {
        return watermark;
    }

    public void watermark(long watermark) {
        this.watermark = Math.max(this.watermark, watermark);
    }

    private boolean eventTime() {
        return config.hasRetention() && config.timeDomain() == TimeDomain.EVENT_TIME;
    }

    private long mustWithin() {
        return config.hasRetention() ? config.retention().toMillis() : Long.MAX_VALUE;
    }

    /** R + L, with the longest L of any config so far (see {@link #longestGeneration}). */
    private long mayWithin() {
        return config.hasRetention()
                ? config.retention().toMillis() + longestGeneration
                : Long.MAX_VALUE;
    }

    /**
     * Continues under a sound config change (the operator restored with it). From now on the new R
     * and A apply; an id already passed keeps the smallest promise and the largest allowance of the
     * configs in force since it passed: after a change of R only occurrences within min(oldR, newR)
     * must still be dropped, ids the operator has already forgotten may stay forgotten. An id that
     * passes later may be remembered for R + L with the longest L so far: a key with state keeps
     * the generation length it recorded (a change of R or G applies to new keys). An id whose
     * generation the old config may already have freed (its time at or below the watermark - R - A
     * of the old config) may stay forgotten too: a larger lateness makes events behind the
     * watermark on time again, but does not bring freed generations back.
     */
    public void changeConfig(DedupConfig newConfig) {
        if (eventTime() && watermark != Long.MIN_VALUE) {
            long freedUpTo =
                    watermark - config.retention().toMillis() - config.allowedLateness().toMillis();
            for (Map<String, List<Passed>> ids : passed.values()) {
                for (List<Passed> list : ids.values()) {
                    for (Passed p : list) {
                        if (p.time <= freedUpTo) {
                            p.mustWithin = 0;
                        }
                    }
                }
            }
        }
        this.config = newConfig;
        this.longestGeneration = Math.max(longestGeneration, generationMillis(newConfig));
        long must = mustWithin();
        long may = mayWithin();
        for (Map<String, List<Passed>> ids : passed.values()) {
            for (List<Passed> list : ids.values()) {
                for (Passed p : list) {
                    p.mustWithin = Math.min(p.mustWithin, must);
                    p.mayWithin = Math.max(p.mayWithin, may);
                }
            }
        }
    }

    /**
     * What the operator may do with an event of {@code key} and {@code id} with timestamp {@code
     * timestamp} (null: none), arriving at processing time {@code processingTime}.
     */
    public Expect expect(String key, String id, Long timestamp, long processingTime) {
        boolean late =
                eventTime()
                        && timestamp != null
                        && timestamp + config.allowedLateness().toMillis() <= watermark;
        if (id.isEmpty()) {
            return late ? Expect.REJECTED_OR_LATE : Expect.REJECTED;
        }
        if (eventTime() && timestamp == null) {
            return Expect.REJECTED;
        }
        if (late) {
            return Expect.LATE;
        }
        long t = time(timestamp, processingTime);
        boolean exact = config.exact();
        boolean must = false;
        boolean near = false;
        for (Passed p : passed.getOrDefault(key, Map.of()).getOrDefault(id, List.of())) {
            long distance = Math.abs(t - p.time);
            must |= distance < p.mustWithin && (p.exact || !exact) && (!p.forward || t >= p.time);
            near |= distance < p.mayWithin;
        }
        return must
                ? Expect.DUPLICATE
                : near ? Expect.EITHER : exact ? Expect.EXACT_FIRST : Expect.FIRST;
    }

    /** Records what the operator did with a judged event (a passed one, or a refresh). */
    public void record(
            String key, String id, Long timestamp, long processingTime, Outcome outcome) {
        boolean refresh =
                outcome == Outcome.DUPLICATE
                        && config.hasRetention()
                        && config.resetRetentionOnDuplicate();
        if (outcome != Outcome.PASSED && !refresh) {
            return;
        }
        passed.computeIfAbsent(key, k -> new HashMap<>())
                .computeIfAbsent(id, k -> new ArrayList<>())
                .add(
                        new Passed(
                                time(timestamp, processingTime),
                                config.exact(),
                                refresh,
                                mustWithin(),
                                mayWithin()));
    }

    private long time(Long timestamp, long processingTime) {
        if (!config.hasRetention()) {
            return 0;
        }
        return eventTime() ? timestamp : processingTime;
    }

    /**
     * The bound on the false-positive rate of one clear first: fpp, or fpp (2G - 1) / G under event
     * time, where disorder can make the operator probe up to 2G - 1 generations of fpp / G each.
     */
    public double falsePositiveBound() {
        int g = config.generations();
        return eventTime() ? config.fpp() * (2 * g - 1) / g : config.fpp();
    }
}
