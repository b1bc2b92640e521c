package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.junit.jupiter.api.Test;

/** Tests for {@link EventTimeBound}, on a fixed clock. */
class EventTimeBoundTest {

    private static final long NOW = Instant.parse("2026-11-27T10:00:00Z").toEpochMilli();
    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC);
    private static final EventTimeBound BOUND = EventTimeBound.of(Duration.ofDays(1), CLOCK);

    /** The watermarks of {@code strategy} over events whose value is their own event time. */
    private static List<Long> run(WatermarkStrategy<Long> strategy, long... events) {
        TimestampAssigner<Long> assigner = strategy.createTimestampAssigner(null);
        WatermarkGenerator<Long> generator = strategy.createWatermarkGenerator(null);
        List<Long> watermarks = new ArrayList<>();
        WatermarkOutput out =
                new WatermarkOutput() {
                    @Override
                    public void emitWatermark(Watermark w) {
                        watermarks.add(w.getTimestamp());
                    }

                    @Override
                    public void markIdle() {}

                    @Override
                    public void markActive() {}
                };
        for (long time : events) {
            Long e = time; // one object, as Flink hands the assigner and the generator
            generator.onEvent(e, assigner.extractTimestamp(e, Long.MIN_VALUE), out);
            generator.onPeriodicEmit(out);
        }
        return watermarks;
    }

    private static WatermarkStrategy<Long> boundedOutOfOrderness() {
        return WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ZERO)
                .withTimestampAssigner((e, previous) -> e);
    }

    @Test
    void aTimeInMicrosecondsNeverReachesTheWatermark() {
        long inMicros = (NOW - 5_000) * 1000;
        List<Long> guarded =
                run(BOUND.guard(boundedOutOfOrderness()), NOW - 10_000, inMicros, NOW - 5_000);
        assertThat(guarded).isNotEmpty().allMatch(w -> w < NOW);
        assertThat(guarded.get(guarded.size() - 1)).isEqualTo(NOW - 5_000 - 1);
        // without the guard, the one event ends event time
        assertThat(run(boundedOutOfOrderness(), NOW - 10_000, inMicros, NOW - 5_000))
                .contains(inMicros - 1);
    }

    @Test
    void eventsUpToTheBoundKeepTheirTimeAndLaterOnesGetNone() {
        TimestampAssigner<Long> a =
                BOUND.guard(boundedOutOfOrderness()).createTimestampAssigner(null);
        long day = Duration.ofDays(1).toMillis();
        assertThat(a.extractTimestamp(NOW + day, 0)).isEqualTo(NOW + day);
        assertThat(a.extractTimestamp(NOW + day + 1, 0)).isEqualTo(Long.MIN_VALUE);
        assertThat(a.extractTimestamp(0L, 0)).isZero();
        assertThat(a.extractTimestamp(Long.MAX_VALUE, 0)).isEqualTo(Long.MIN_VALUE);
        assertThat(BOUND.latestAdmitted()).isEqualTo(NOW + day);
    }

    @Test
    void anAssignerSetAfterTheGuardIsGuardedToo() {
        WatermarkStrategy<Long> later =
                BOUND.guard(WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ZERO))
                        .withTimestampAssigner((e, previous) -> e);
        assertThat(later.createTimestampAssigner(null).extractTimestamp(NOW * 1000, 0))
                .isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void recordTimestampsOfTheSourceAreGuarded() {
        // no assigner: the source's record timestamp (Kafka's, say) is the event time
        TimestampAssigner<Long> a =
                BOUND.guard(WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ZERO))
                        .createTimestampAssigner(null);
        assertThat(a.extractTimestamp(0L, NOW)).isEqualTo(NOW);
        assertThat(a.extractTimestamp(0L, NOW * 1_000_000)).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void aHugeBoundSaturatesAndANegativeOneIsRefused() {
        EventTimeBound forever = EventTimeBound.of(Duration.ofSeconds(Long.MAX_VALUE), CLOCK);
        assertThat(forever.admits(Long.MAX_VALUE)).isTrue();
        assertThatThrownBy(() -> EventTimeBound.of(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAhead must be >= 0, was PT-0.001S");
    }

    @Test
    void aGeneratorThatReadsTheEventNeverSeesARefusedOne() {
        // a punctuated generator: the event carries its own watermark, the timestamp is unused
        WatermarkStrategy<Long> punctuated =
                WatermarkStrategy.<Long>forGenerator(
                                context ->
                                        new WatermarkGenerator<Long>() {
                                            @Override
                                            public void onEvent(
                                                    Long event,
                                                    long timestamp,
                                                    WatermarkOutput out) {
                                                out.emitWatermark(new Watermark(event));
                                            }

                                            @Override
                                            public void onPeriodicEmit(WatermarkOutput out) {}
                                        })
                        .withTimestampAssigner((e, previous) -> e);
        long inMicros = (NOW - 5_000) * 1000;
        assertThat(run(BOUND.guard(punctuated), NOW - 10_000, inMicros, NOW - 5_000))
                .containsExactly(NOW - 10_000, NOW - 5_000);
        // an event that had no timestamp before the guard still reaches the generator
        TimestampAssigner<Long> none =
                BOUND.guard(punctuated.withTimestampAssigner((e, previous) -> Long.MIN_VALUE))
                        .createTimestampAssigner(null);
        assertThat(none.extractTimestamp(1L, 0)).isEqualTo(Long.MIN_VALUE);
        WatermarkStrategy<Long> noTimestamps =
                BOUND.guard(punctuated.withTimestampAssigner((e, previous) -> Long.MIN_VALUE));
        assertThat(run(noTimestamps, 7L)).containsExactly(7L);
    }

    @Test
    void aClockThatCannotBeSerializedIsRefusedAtOnce() {
        Clock unserializable =
                new Clock() {
                    @Override
                    public java.time.ZoneId getZone() {
                        return ZoneOffset.UTC;
                    }

                    @Override
                    public Clock withZone(java.time.ZoneId zone) {
                        return this;
                    }

                    @Override
                    public Instant instant() {
                        return Instant.ofEpochMilli(NOW);
                    }
                };
        assertThatThrownBy(() -> EventTimeBound.of(Duration.ofDays(1), unserializable))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("clock must be Serializable");
    }
}
