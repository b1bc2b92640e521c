package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupHarness;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.KeyedEvents;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Tests for {@link CountFunction} in the keyed harness; events are "key,id" strings. */
public class CountFunctionTest {

    public static final OutputTag<String> REJECTED = BloomCount.rejectedTag(Types.STRING);

    public static KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> harness(
            CountConfig config, Backend backend) throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(
                                new CountFunction<String, String>(
                                        KeyedEvents.idSelector(),
                                        config,
                                        config.filter().expectedItems(),
                                        REJECTED)),
                        KeyedEvents::key,
                        Types.STRING,
                        DedupHarness.MAX_PARALLELISM,
                        1,
                        0);
        h.setStateBackend(backend.create());
        return h;
    }

    public static CountConfig.Builder eventTime(long expected) {
        return CountConfig.builder()
                .filter(FilterSizing.builder().expectedItems(expected).fpp(0.01).build())
                .timeDomain(TimeDomain.EVENT_TIME)
                .interval(Duration.ofMillis(1000));
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void emitsEachIntervalAndAFinalRecordWithoutCountingRepeats(Backend backend) throws Exception {
        try (var h = harness(eventTime(10_000).build(), backend)) {
            h.open();
            for (int i = 0; i < 3000; i++) {
                h.processElement("a," + (i % 1000), i / 3); // each id three times
            }
            h.processElement("b,x", 10);
            h.processWatermark(new Watermark(999));
            assertThat(h.extractOutputValues()).as("the first interval ends at 1000").isEmpty();
            h.processWatermark(new Watermark(1000));
            List<CountEstimate> first = h.extractOutputValues();
            assertThat(first).extracting(e -> e.key).containsExactlyInAnyOrder("a", "b");
            CountEstimate a = first.stream().filter(e -> e.key.equals("a")).findFirst().get();
            assertThat(a.isFinal).isFalse();
            assertThat(a.timestamp).isEqualTo(1000);
            // 1000 distinct ids, not 3000; the interval is three standard errors wide
            assertThat(1000.0).isBetween(a.lower, a.upper);
            assertThat(a.valid).isTrue();
            assertThat(a.stages).isEqualTo(1);
            assertThat(a.bits).isGreaterThan(0);
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            List<CountEstimate> all = h.extractOutputValues();
            assertThat(all.stream().filter(e -> e.isFinal))
                    .extracting(e -> e.key)
                    .containsExactlyInAnyOrder("a", "b");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void onChangeOnlySkipsKeysWithoutNewItems(Backend backend) throws Exception {
        try (var h = harness(eventTime(1000).onChangeOnly(true).build(), backend)) {
            h.open();
            h.processElement("a,1", 1);
            h.processWatermark(new Watermark(1000));
            h.processElement("a,1", 1500); // a repeat: no change
            h.processWatermark(new Watermark(2500));
            h.processElement("a,2", 2600); // a change
            h.processWatermark(new Watermark(3500));
            assertThat(h.extractOutputValues())
                    .extracting(e -> e.timestamp)
                    .containsExactly(1000L, 3000L);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aWatermarkJumpEmitsOneRecordNotOnePerMissedInterval(Backend backend) throws Exception {
        try (var h = harness(eventTime(1000).build(), backend)) {
            h.open();
            h.processElement("a,1", 1);
            h.processWatermark(new Watermark(1000));
            h.processWatermark(new Watermark(100_000)); // 99 intervals later
            assertThat(h.extractOutputValues())
                    .extracting(e -> e.timestamp)
                    .containsExactly(1000L, 2000L);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aFullFixedFilterSaysSaturatedInsteadOfANumber(Backend backend) throws Exception {
        CountConfig config =
                eventTime(100)
                        .filter(FilterSizing.builder().expectedItems(100).fpp(0.01).fixed().build())
                        .build();
        try (var h = harness(config, backend)) {
            h.open();
            for (int i = 0; i < 100_000; i++) {
                h.processElement("a," + i, 1);
            }
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            CountEstimate e = h.extractOutputValues().get(h.extractOutputValues().size() - 1);
            assertThat(e.saturated).isTrue();
            assertThat(e.valid).isFalse();
            assertThat(e.estimate).isNaN();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aKeySizedForOneItemGivesAValidEstimateNotSaturated(Backend backend) throws Exception {
        // expectedItems 1: a first stage of a few dozen bits, never 16 zero bits even when empty
        try (var h = harness(eventTime(1).build(), backend)) {
            h.open();
            h.processElement("a,x", 1);
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            CountEstimate e = h.extractOutputValues().get(h.extractOutputValues().size() - 1);
            assertThat(e.isFinal).isTrue();
            assertThat(e.bits - e.bitsSet).as("zero bits").isLessThan(16);
            assertThat(e.saturated).as("%s", e).isFalse();
            assertThat(e.valid).isTrue();
            assertThat(1.0).isBetween(e.lower, e.upper);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theCascadeKeepsTheEstimateValidAtHundredTimesTheExpectedItems(Backend backend)
            throws Exception {
        try (var h = harness(eventTime(100).build(), backend)) {
            h.open();
            for (int i = 0; i < 10_000; i++) {
                h.processElement("a," + i, 1);
            }
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            CountEstimate e = h.extractOutputValues().get(h.extractOutputValues().size() - 1);
            assertThat(e.valid).isTrue();
            assertThat(e.stages).isGreaterThan(4);
            assertThat(10_000.0).isBetween(e.lower, e.upper);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void windowsCountSeparatelyEmitAtTheirEndAndFreeTheirState(Backend backend) throws Exception {
        CountConfig config = eventTime(1000).window(Duration.ofMillis(100)).build();
        try (var h = harness(config, backend)) {
            h.open();
            for (int i = 0; i < 50; i++) {
                h.processElement("a," + i, 10); // window [0, 100): 50 ids
                h.processElement("a," + i, 150); // window [100, 200): the same 50 ids
            }
            h.processElement("a,late", 5);
            h.processWatermark(new Watermark(99));
            assertThat(h.extractOutputValues()).hasSize(1);
            CountEstimate w0 = h.extractOutputValues().get(0);
            assertThat(w0.windowStart).isZero();
            assertThat(w0.timestamp).isEqualTo(100);
            assertThat(w0.isFinal).isTrue();
            assertThat(51.0).isBetween(w0.lower, w0.upper);
            h.processElement("a,too-late", 50); // its window has closed
            assertThat(h.getSideOutput(REJECTED)).hasSize(1);
            h.processWatermark(new Watermark(199));
            CountEstimate w1 = h.extractOutputValues().get(1);
            assertThat(w1.windowStart).isEqualTo(100);
            assertThat(50.0).isBetween(w1.lower, w1.upper);
            assertThat(stateEntries(h)).as("all windows closed: state freed").isZero();
            assertThat(h.numEventTimeTimers()).as("and no timer left").isZero();
        }
    }

    /**
     * Flink does not checkpoint watermarks: a restored task sees {@code Long.MIN_VALUE} until its
     * input's next one. An event of a window that closed before the snapshot, replayed in that gap,
     * must still be rejected, not open the window again and emit it a second time.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void anEventOfAClosedWindowIsRejectedAfterARestoreBeforeAnyWatermark(Backend backend)
            throws Exception {
        CountConfig config = eventTime(1000).window(Duration.ofMillis(100)).build();
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = harness(config, backend)) {
            h.open();
            h.processElement("a,x", 10);
            h.processWatermark(new Watermark(99)); // closes [0, 100)
            assertThat(h.extractOutputValues()).hasSize(1);
            snapshot = h.snapshot(1, 1);
        }
        try (var h = harness(config, backend)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement("a,y", 50); // of the closed window, before any watermark
            h.processWatermark(new Watermark(199));
            assertThat(h.extractOutputValues()).as("window [0, 100) emitted again").isEmpty();
            assertThat(h.getSideOutput(REJECTED)).hasSize(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void anEventOfOneWindowTooManyClosesTheOldestOpenWindowEarly(Backend backend) throws Exception {
        CountConfig config = eventTime(1000).window(Duration.ofMillis(100)).openWindows(2).build();
        try (var h = harness(config, backend)) {
            h.open();
            h.processElement("a,x", 10); // window 0
            h.processElement("a,y", 110); // window 1
            assertThat(h.extractOutputValues()).isEmpty();
            h.processElement("a,z", 210); // window 2 needs window 0's slot
            assertThat(h.extractOutputValues())
                    .extracting(e -> e.windowStart, e -> e.isFinal)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(0L, true));
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            assertThat(h.extractOutputValues())
                    .extracting(e -> e.windowStart)
                    .containsExactly(0L, 100L, 200L);
            assertThat(stateEntries(h)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void processingTimeWindowsCloseOnTheClockAndLeaveNoTimers(Backend backend) throws Exception {
        CountConfig config =
                CountConfig.builder()
                        .filter(FilterSizing.builder().expectedItems(1000).fpp(0.01).build())
                        .window(Duration.ofMillis(100))
                        .build();
        try (var h = harness(config, backend)) {
            h.open();
            h.setProcessingTime(10);
            h.processElement("a,x", 0);
            h.processElement("a,y", 0);
            h.setProcessingTime(99);
            CountEstimate w = h.extractOutputValues().get(0);
            assertThat(w.windowStart).isZero();
            assertThat(2.0).isBetween(w.lower, w.upper);
            assertThat(stateEntries(h)).isZero();
            assertThat(h.numEventTimeTimers()).as("end-of-input timer deleted").isZero();
            assertThat(h.numProcessingTimeTimers()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aRestoreDoesNotDoubleCountReplayedEvents(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness(eventTime(10_000).build(), backend)) {
            h.open();
            for (int i = 0; i < 500; i++) {
                h.processElement("a," + i, 1);
            }
            snapshot = h.snapshot(1, 1);
        }
        try (var h = harness(eventTime(10_000).build(), backend)) {
            h.initializeState(snapshot);
            h.open();
            for (int i = 0; i < 1000; i++) {
                h.processElement("a," + i, 2); // 0..499 replayed, 500..999 new
            }
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            CountEstimate e = h.extractOutputValues().get(h.extractOutputValues().size() - 1);
            assertThat(1000.0).isBetween(e.lower, e.upper);
            assertThat(1500.0).isGreaterThan(e.upper);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void eventsWithoutIdOrTimestampAreRejected(Backend backend) throws Exception {
        try (var h = harness(eventTime(10).build(), backend)) {
            h.open();
            h.processElement("a,", 1);
            h.processElement(
                    new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>("a,x"));
            assertThat(h.getSideOutput(REJECTED)).hasSize(2);
        }
    }

    @org.junit.jupiter.api.Test
    void eventTimeCountsRejectEventsWithoutTimestamp() throws Exception {
        try (var h = harness(eventTime(1000).build(), Backend.HEAP)) {
            h.open();
            h.processElement(new StreamRecord<>("a,1")); // no timestamp
            // Long.MIN_VALUE is how sources without a WatermarkStrategy mark "no timestamp"
            h.processElement(new StreamRecord<>("a,2", Long.MIN_VALUE));
            h.processElement("a,3", 5);
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            assertThat(h.getSideOutput(REJECTED))
                    .extracting(StreamRecord::getValue)
                    .containsExactly("a,1", "a,2");
            List<CountEstimate> out = h.extractOutputValues();
            CountEstimate last = out.get(out.size() - 1);
            assertThat(last.isFinal).isTrue();
            assertThat(1.0).as("only a,3 counted").isBetween(last.lower, last.upper);
        }
    }

    @org.junit.jupiter.api.Test
    void configRejectsBadIntervals() {
        assertThatThrownBy(() -> CountConfig.builder().interval(Duration.ZERO))
                .hasMessageContaining("interval must be >= 1 ms");
        assertThatThrownBy(() -> CountConfig.builder().openWindows(0))
                .hasMessageContaining("openWindows");
    }

    static long stateEntries(
            KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> h)
            throws Exception {
        var backend = ((AbstractStreamOperator<?>) h.getOperator()).getKeyedStateBackend();
        try (var meta = backend.getKeys(CountFunction.META_STATE, VoidNamespace.INSTANCE);
                var pages = backend.getKeys(CountFunction.PAGES_STATE, VoidNamespace.INSTANCE)) {
            return meta.count() + pages.count();
        }
    }
}
