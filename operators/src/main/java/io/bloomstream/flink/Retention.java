package io.bloomstream.flink;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * How long a keyed filter remembers an id, on which clock: an id seen again after the retention
 * passes again, and the state of expired generations is freed. Immutable and validated; build it
 * with {@link #builder(Duration, TimeDomain)}.
 *
 * <p>Each key's filter is kept as G generations, each spanning L = R / (G - 1) of time (R the
 * retention): an id is remembered for at least R and at most R G / (G - 1). Under event time, an
 * event later than the watermark by more than the allowed lateness is not judged (it goes to the
 * operator's late output), and state is kept that much longer.
 */
@PublicEvolving
public final class Retention implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default number of generations. */
    public static final int DEFAULT_GENERATIONS = 2;

    /**
     * The most generation slots a key may need for on-time events: ceil((R + A) / L) + 2 for
     * retention R, allowed lateness A and generation length L (the rest of a key's 64 slots take
     * far-future buckets). Checked when the retention is built.
     */
    public static final int MAX_ON_TIME_GENERATIONS = 48;

    /** The longest retention or allowed lateness: 100 years. */
    public static final Duration MAX_DURATION = Duration.ofDays(36_525);

    private final Duration duration;
    private final TimeDomain timeDomain;
    private final int generations;
    private final Duration allowedLateness;

    private Retention(Builder b) {
        this.duration = b.duration;
        this.timeDomain = b.timeDomain;
        this.generations = b.generations;
        this.allowedLateness = b.allowedLateness;
    }

    /**
     * A builder for a retention of {@code duration} on {@code timeDomain}.
     *
     * @throws IllegalArgumentException unless the duration is from 1 ms to 100 years
     */
    public static Builder builder(Duration duration, TimeDomain timeDomain) {
        return new Builder(duration, timeDomain);
    }

    /** How long an id is remembered. */
    public Duration duration() {
        return duration;
    }

    /** The clock of the retention. */
    public TimeDomain timeDomain() {
        return timeDomain;
    }

    /** G, the number of filter generations. */
    public int generations() {
        return generations;
    }

    /**
     * How far behind the watermark an event-time event may be and still be judged: an event with
     * timestamp t is late when t + allowedLateness &lt;= the current watermark. Zero by default
     * (Flink's convention for windows).
     */
    public Duration allowedLateness() {
        return allowedLateness;
    }

    /** The retention in whole milliseconds (rounded up). */
    public long millis() {
        return duration.toMillis() + (duration.toNanos() % 1_000_000 == 0 ? 0 : 1);
    }

    /** The length of one generation: retention / (G - 1), in milliseconds, rounded up. */
    public long generationMillis() {
        // Rounded up, so that (G - 1) generations always cover the whole retention.
        return Math.max(1, (millis() + generations - 2) / (generations - 1));
    }

    /**
     * The ids one generation is sized for, when {@code itemsPerKey} distinct ids per key arrive
     * within one retention period: a generation spans 1 / (G - 1) of it (rounded up).
     */
    public long generationItems(long itemsPerKey) {
        return Math.max(1, (itemsPerKey + generations - 2) / (generations - 1));
    }

    @Override
    public String toString() {
        return duration
                + " "
                + timeDomain
                + " x"
                + generations
                + (allowedLateness.isZero() ? "" : ", allowedLateness=" + allowedLateness);
    }

    /** Builds a {@link Retention}; each setter checks its argument. */
    @PublicEvolving
    public static final class Builder {
        private final Duration duration;
        private final TimeDomain timeDomain;
        private int generations = DEFAULT_GENERATIONS;
        private Duration allowedLateness = Duration.ZERO;

        private Builder(Duration duration, TimeDomain timeDomain) {
            Objects.requireNonNull(duration, "retention");
            Objects.requireNonNull(timeDomain, "timeDomain");
            if (duration.isNegative()
                    || duration.isZero()
                    || duration.compareTo(MAX_DURATION) > 0
                    || duration.toMillis() < 1) {
                throw new IllegalArgumentException(
                        "retention must be from 1 ms to 100 years, was " + duration);
            }
            this.duration = duration;
            this.timeDomain = timeDomain;
        }

        /**
         * Filter generations, 2 to 46 (default 2): more make the retention finer-grained (an id is
         * remembered for less than R + R/(G-1)) and cost lookups in more generations. With allowed
         * lateness A, (G - 1)(1 + A/R) + 2 must stay at most {@link #MAX_ON_TIME_GENERATIONS}.
         */
        public Builder generations(int generations) {
            if (generations < 2 || generations > MAX_ON_TIME_GENERATIONS - 2) {
                throw new IllegalArgumentException(
                        "generations must be in [2, "
                                + (MAX_ON_TIME_GENERATIONS - 2)
                                + "], was "
                                + generations);
            }
            this.generations = generations;
            return this;
        }

        /**
         * How late (behind the watermark) an event-time event may arrive and still be judged; later
         * ones go to the late side output. Zero or more, in whole milliseconds (default 0).
         */
        public Builder allowedLateness(Duration allowedLateness) {
            Objects.requireNonNull(allowedLateness, "allowedLateness");
            if (allowedLateness.isNegative() || allowedLateness.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(
                        "allowedLateness must be from 0 to 100 years, was " + allowedLateness);
            }
            this.allowedLateness = allowedLateness;
            return this;
        }

        /**
         * Builds the retention.
         *
         * @throws IllegalArgumentException if on-time events would need more than {@link
         *     #MAX_ON_TIME_GENERATIONS} generation slots per key
         */
        public Retention build() {
            Retention r = new Retention(this);
            long l = r.generationMillis();
            long span = r.millis() + allowedLateness.toMillis();
            long needed = (span + l - 1) / l + 2;
            if (needed > MAX_ON_TIME_GENERATIONS) {
                throw new IllegalArgumentException(
                        "generations "
                                + generations
                                + " and allowedLateness "
                                + allowedLateness
                                + " with retention "
                                + duration
                                + " need "
                                + needed
                                + " generation slots per key for on-time events, at most "
                                + MAX_ON_TIME_GENERATIONS
                                + ": lower generations or allowedLateness");
            }
            return r;
        }
    }
}
