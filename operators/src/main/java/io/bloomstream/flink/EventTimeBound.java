package io.bloomstream.flink;

import java.io.Serializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.eventtime.SerializableTimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.WatermarkAlignmentParams;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bound on how far ahead of the wall clock an event time may be, applied where timestamps are
 * assigned, before the watermark sees them. One absurd event time (milliseconds written in
 * microseconds, a corrupt field) otherwise moves the watermark to the end of time: every later
 * event is late, every event-time generation and window is freed, and the operators keep the
 * largest watermark they judged with across restores (it never lowers), so the damage outlives the
 * job.
 *
 * <pre>{@code
 * WatermarkStrategy<Click> watermarks =
 *         EventTimeBound.of(Duration.ofDays(1))
 *                 .guard(WatermarkStrategy.<Click>forBoundedOutOfOrderness(Duration.ofSeconds(5))
 *                         .withTimestampAssigner((click, previous) -> click.time));
 * DataStream<Click> clicks = env.fromSource(source, watermarks, "clicks");
 * }</pre>
 *
 * <p>The guarded strategy's timestamp assigner gives an event whose time is more than the bound
 * ahead of {@link #clock()} at assignment no timestamp ({@code Long.MIN_VALUE}, Flink's "none"),
 * and the guarded strategy's watermark generator is not called for it (Flink calls {@code onEvent}
 * for every record, so a generator that reads the event, a punctuated one, is skipped for a refused
 * one), and the event-time operators send it to their rejected output ("no timestamp"); the first
 * one of each source subtask is logged with its time and the bound. An event that had no timestamp
 * before the guard still reaches the generator, as it would unguarded. A timestamp assigner set on
 * the guarded strategy afterwards ({@code withTimestampAssigner}) is guarded too. Events in the
 * past are not this guard's business: they are late, or not, by the watermark.
 *
 * <p>The default bound, {@link #DEFAULT_MAX_AHEAD} (one day), admits clocks skewed by hours and
 * time zones mistaken for offsets, and refuses a time in microseconds or nanoseconds (thousands of
 * years ahead) and any date years ahead.
 */
@PublicEvolving
public final class EventTimeBound implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The default bound: one day ahead of the wall clock. */
    public static final Duration DEFAULT_MAX_AHEAD = Duration.ofDays(1);

    private static final Logger LOG = LoggerFactory.getLogger(EventTimeBound.class);

    private final long maxAheadMillis;
    private final Clock clock;

    private EventTimeBound(Duration maxAhead, Clock clock) {
        Objects.requireNonNull(maxAhead, "maxAhead");
        if (maxAhead.isNegative()) {
            throw new IllegalArgumentException("maxAhead must be >= 0, was " + maxAhead);
        }
        this.maxAheadMillis = saturatedMillis(maxAhead);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Events at most {@code maxAhead} ahead of the system clock (UTC). */
    public static EventTimeBound of(Duration maxAhead) {
        return new EventTimeBound(maxAhead, Clock.systemUTC());
    }

    /**
     * Events at most {@code maxAhead} ahead of {@code clock} (for tests and replays; the clock is
     * serialized with the job, as {@code Clock.systemUTC()} and {@code Clock.fixed(...)} are, so it
     * must be {@link Serializable}: another one is refused here, not at job submission).
     */
    public static EventTimeBound of(Duration maxAhead, Clock clock) {
        Objects.requireNonNull(clock, "clock");
        if (!(clock instanceof Serializable)) {
            throw new IllegalArgumentException(
                    "clock must be Serializable (it is shipped with the job), was "
                            + clock.getClass().getName());
        }
        return new EventTimeBound(maxAhead, clock);
    }

    /** The bound ahead of the clock. */
    public Duration maxAhead() {
        return Duration.ofMillis(maxAheadMillis);
    }

    /** The clock the bound is measured from. */
    public Clock clock() {
        return clock;
    }

    /** The latest event time admitted now: the clock plus the bound (at most {@code MAX_VALUE}). */
    public long latestAdmitted() {
        long now = clock.millis();
        return now > Long.MAX_VALUE - maxAheadMillis ? Long.MAX_VALUE : now + maxAheadMillis;
    }

    /**
     * Whether {@code timestamp} is admitted now: at most the bound ahead of the clock. {@code
     * Long.MIN_VALUE} (no timestamp) is admitted: it is left as it is.
     */
    public boolean admits(long timestamp) {
        return timestamp <= latestAdmitted();
    }

    /**
     * {@code strategy} with this bound: events whose assigned time is too far ahead get no
     * timestamp, and its watermark generator is not called for them ({@code onEvent} is skipped).
     */
    public <T> WatermarkStrategy<T> guard(WatermarkStrategy<T> strategy) {
        return new Guarded<>(Objects.requireNonNull(strategy, "strategy"), this);
    }

    @Override
    public String toString() {
        return "EventTimeBound{maxAhead=" + maxAhead() + ", clock=" + clock + "}";
    }

    private static long saturatedMillis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** The guarded strategy: the given one, its timestamps bounded. */
    private static final class Guarded<T> implements WatermarkStrategy<T> {
        private static final long serialVersionUID = 1L;

        private final WatermarkStrategy<T> strategy;
        private final EventTimeBound bound;

        /**
         * Shared by this copy's assigner and generators (one subtask, one thread: Flink calls the
         * assigner, then the generator, for each record); not shipped with the job.
         */
        private transient Refused refused;

        Guarded(WatermarkStrategy<T> strategy, EventTimeBound bound) {
            this.strategy = strategy;
            this.bound = bound;
        }

        @Override
        public WatermarkGenerator<T> createWatermarkGenerator(
                WatermarkGeneratorSupplier.Context context) {
            return new GuardedGenerator<>(strategy.createWatermarkGenerator(context), refused());
        }

        @Override
        public TimestampAssigner<T> createTimestampAssigner(
                TimestampAssignerSupplier.Context context) {
            return new BoundedAssigner<>(
                    strategy.createTimestampAssigner(context), bound, refused());
        }

        private Refused refused() {
            if (refused == null) {
                refused = new Refused();
            }
            return refused;
        }

        @Override
        public WatermarkAlignmentParams getAlignmentParameters() {
            return strategy.getAlignmentParameters();
        }

        @Override
        public WatermarkStrategy<T> withTimestampAssigner(
                TimestampAssignerSupplier<T> timestampAssigner) {
            return new Guarded<>(strategy.withTimestampAssigner(timestampAssigner), bound);
        }

        @Override
        public WatermarkStrategy<T> withTimestampAssigner(
                SerializableTimestampAssigner<T> timestampAssigner) {
            return new Guarded<>(strategy.withTimestampAssigner(timestampAssigner), bound);
        }
    }

    /** The marker: the last event the assigner refused, until the generator has skipped it. */
    private static final class Refused {
        Object event;
    }

    /** The given generator, not called for an event the assigner refused. */
    private static final class GuardedGenerator<T> implements WatermarkGenerator<T> {
        private final WatermarkGenerator<T> generator;
        private final Refused refused;

        GuardedGenerator(WatermarkGenerator<T> generator, Refused refused) {
            this.generator = generator;
            this.refused = refused;
        }

        @Override
        public void onEvent(T event, long eventTimestamp, WatermarkOutput output) {
            if (eventTimestamp == Long.MIN_VALUE && refused.event == event) {
                refused.event = null;
                return;
            }
            generator.onEvent(event, eventTimestamp, output);
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            generator.onPeriodicEmit(output);
        }
    }

    /** Gives a timestamp too far ahead none, and marks its event; logs the first one. */
    private static final class BoundedAssigner<T> implements TimestampAssigner<T> {
        private final TimestampAssigner<T> assigner;
        private final EventTimeBound bound;
        private final Refused refused;
        private boolean warned;

        BoundedAssigner(TimestampAssigner<T> assigner, EventTimeBound bound, Refused refused) {
            this.assigner = assigner;
            this.bound = bound;
            this.refused = refused;
        }

        @Override
        public long extractTimestamp(T element, long recordTimestamp) {
            long t = assigner.extractTimestamp(element, recordTimestamp);
            if (bound.admits(t)) {
                refused.event = null;
                return t;
            }
            refused.event = element;
            if (!warned) {
                warned = true;
                LOG.warn(
                        "Event time {} ({}) is more than {} ahead of the clock ({}): the record gets"
                                + " no timestamp, so the watermark ignores it and the event-time"
                                + " operators reject it; so will every other such record (not"
                                + " logged). A time in microseconds or nanoseconds instead of"
                                + " milliseconds?",
                        t,
                        Instant.ofEpochMilli(t),
                        bound.maxAhead(),
                        Instant.ofEpochMilli(bound.clock.millis()));
            }
            return Long.MIN_VALUE;
        }
    }
}
