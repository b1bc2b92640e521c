package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.DUPLICATES;
import static io.bloomstream.flink.dedup.DedupHarness.LATE;
import static io.bloomstream.flink.dedup.DedupHarness.REJECTED;
import static io.bloomstream.flink.dedup.DedupHarness.output;
import static io.bloomstream.flink.dedup.DedupHarness.side;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.KeyedEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Harness tests for {@link DedupFunction}, on the heap and RocksDB backends. */
class DedupFunctionTest {

    private static final DedupConfig SMALL =
            DedupConfig.builder().expectedItems(1000).fpp(0.001).build();

    @ParameterizedTest
    @EnumSource(Backend.class)
    void dropsSecondOccurrenceOfSameIdPerKey(Backend backend) throws Exception {
        try (var h = DedupHarness.create(SMALL, backend, 1, 0)) {
            h.open();
            for (String e : List.of("a,1", "a,2", "a,1", "b,1", "b,1", "a,2", "b,3")) {
                h.processElement(e, 0);
            }
            assertThat(output(h)).containsExactly("a,1", "a,2", "b,1", "b,3");
            assertThat(side(h, DUPLICATES)).isEmpty();
        }
    }

    @Test
    void duplicatesGoToTheSideOutputWhenAsked() throws Exception {
        DedupConfig config =
                DedupConfig.builder().expectedItems(1000).fpp(0.001).emitDuplicates(true).build();
        try (var h = DedupHarness.create(config, Backend.HEAP, 1, 0)) {
            h.open();
            for (String e : List.of("a,1", "a,1", "a,1", "a,2")) {
                h.processElement(e, 0);
            }
            assertThat(output(h)).containsExactly("a,1", "a,2");
            assertThat(side(h, DUPLICATES)).containsExactly("a,1", "a,1");
        }
    }

    @Test
    void emptyIdsAreRejectedNotDropped() throws Exception {
        try (var h = DedupHarness.create(SMALL, Backend.HEAP, 1, 0)) {
            h.open();
            h.processElement("a,", 0);
            h.processElement("a,x", 0);
            assertThat(output(h)).containsExactly("a,x");
            assertThat(side(h, REJECTED)).containsExactly("a,");
        }
    }

    /** 1000 ids at 0.1%, remembered for 10 s of event time in 2 generations of 10 s. */
    static DedupConfig.Builder tenSecondsOfEventTime() {
        return DedupConfig.builder()
                .expectedItems(1000)
                .fpp(0.001)
                .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void eventTimeRetentionForgetsAndFreesExpiredGenerations(Backend backend) throws Exception {
        // Retention R = 10 s with 2 generations of L = 10 s: an occurrence less than R from a
        // passed one is a duplicate, one at least R + L = 20 s from every passed one passes.
        DedupConfig config = tenSecondsOfEventTime().build();
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            h.processElement("a,1", 1_000);
            h.processElement("a,1", 9_000); // 8 s after: duplicate
            h.processElement("a,1", 10_500); // 9.5 s after: duplicate
            h.processElement("a,1", 21_000); // 20 s after: passes again
            assertThat(output(h)).containsExactly("a,1", "a,1");
            assertThat(DedupHarness.keysWithState(h)).isPositive();
            // 21 s's generation ends before 31 s; no on-time event consults it past 41 s.
            h.processWatermark(41_000);
            assertThat(DedupHarness.keysWithState(h)).isZero();
            h.processElement("a,1", 41_001);
            assertThat(output(h)).containsExactly("a,1", "a,1", "a,1");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void eventsBehindTheWatermarkGoToTheLateOutputUnjudged(Backend backend) throws Exception {
        DedupConfig config =
                tenSecondsOfEventTime()
                        .allowedLateness(Duration.ofSeconds(2))
                        .emitDuplicates(true)
                        .build();
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            h.processElement("a,1", 10_000);
            h.processWatermark(12_000);
            h.processElement("a,1", 10_001); // within the allowed lateness: judged, duplicate
            h.processElement("a,2", 10_000); // t + 2 s <= watermark: late
            h.processElement("a,2", 10_500); // not late: judged, a first occurrence
            assertThat(output(h)).containsExactly("a,1", "a,2");
            assertThat(side(h, DUPLICATES)).containsExactly("a,1");
            assertThat(side(h, LATE)).containsExactly("a,2");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aFarFutureEventDoesNotForgetLiveIds(Backend backend) throws Exception {
        DedupConfig config = tenSecondsOfEventTime().build();
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            h.processElement("a,1", 5_000);
            h.processElement("a,x", 1_000_000_000_000L);
            h.processElement("a,x", Long.MAX_VALUE);
            h.processWatermark(6_000);
            h.processElement("a,1", 7_000); // 2 s after the first: a duplicate
            h.processElement("a,x", 1_000_000_000_001L); // 1 ms after the far one: a duplicate
            assertThat(output(h)).containsExactly("a,1", "a,x", "a,x");
            h.processWatermark(Long.MAX_VALUE); // the end of input frees everything
            assertThat(DedupHarness.keysWithState(h)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aKeyWithMoreBucketsThanSlotsWidensAGenerationAndForgetsNothing(Backend backend)
            throws Exception {
        // 10 ms buckets; 100 events of one key 1 s apart need 100 generations, past the 64 a key
        // can hold: later buckets join the nearest generation, which then covers a range.
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .fpp(0.001)
                        .retention(Duration.ofMillis(10), TimeDomain.EVENT_TIME)
                        .emitDuplicates(true)
                        .build();
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            for (int i = 0; i < 100; i++) {
                h.processElement("a," + i, 1_000L * i);
            }
            for (int i = 0; i < 100; i++) {
                h.processElement("a," + i, 1_000L * i + 5); // 5 ms later: a duplicate
            }
            assertThat(output(h)).hasSize(100);
            assertThat(side(h, DUPLICATES)).hasSize(100);
            h.processWatermark(Long.MAX_VALUE);
            assertThat(DedupHarness.keysWithState(h)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aFloodOfFarFutureBucketsCannotTakeTheSlotsOfOnTimeEvents(Backend backend)
            throws Exception {
        try (var h = DedupHarness.create(tenSecondsOfEventTime().build(), backend, 1, 0)) {
            h.open();
            h.processWatermark(1_000_000);
            for (int i = 0; i < 100; i++) { // 100 far-future buckets, more than a key has slots
                h.processElement("a,f" + i, 4_000_000_000_000L + 100_000L * i);
            }
            h.processElement("a,x", 1_001_000);
            h.processWatermark(1_001_000 + 3_600_000);
            h.processElement("a,x", 1_001_000 + 3_600_001); // an hour later: passes again
            h.processElement("a,f7", 4_000_000_700_001L); // the far-future ids are remembered
            assertThat(output(h)).hasSize(102).endsWith("a,x", "a,x");
        }
    }

    @Test
    void eventTimeRetentionRejectsEventsWithoutTimestamp() throws Exception {
        DedupConfig config =
                DedupConfig.builder()
                        .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME)
                        .build();
        try (var h = DedupHarness.create(config, Backend.HEAP, 1, 0)) {
            h.open();
            h.processElement(
                    new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>("a,1"));
            // Long.MIN_VALUE is how sources without a WatermarkStrategy mark "no timestamp"
            h.processElement(
                    new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>(
                            "a,2", Long.MIN_VALUE));
            assertThat(output(h)).isEmpty();
            assertThat(side(h, REJECTED)).containsExactly("a,1", "a,2");
        }
    }

    @Test
    void processingTimeRetention() throws Exception {
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .retention(Duration.ofMinutes(1), TimeDomain.PROCESSING_TIME)
                        .generations(4)
                        .build();
        try (var h = DedupHarness.create(config, Backend.HEAP, 1, 0)) {
            h.open();
            // each event's bundle judged before the clock moves on, as its 10-ms delay would
            h.setProcessingTime(0);
            h.processElement("a,1", 0);
            DedupHarness.judge(h);
            h.setProcessingTime(59_000);
            h.processElement("a,1", 0); // within a minute: duplicate
            DedupHarness.judge(h);
            h.setProcessingTime(81_000); // 20-s buckets: bucket 0 expired at 80 s
            h.processElement("a,1", 0);
            assertThat(output(h)).containsExactly("a,1", "a,1");
            h.setProcessingTime(10 * 60_000);
            assertThat(DedupHarness.keysWithState(h)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void snapshotThenRestoreKeepsEveryIdSeen(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = DedupHarness.create(SMALL, backend, 1, 0)) {
            h.open();
            for (int i = 0; i < 500; i++) {
                h.processElement("k" + (i % 7) + "," + i, 0);
            }
            assertThat(output(h)).hasSize(500);
            snapshot = h.snapshot(1, 1);
        }
        try (var h = DedupHarness.create(SMALL, backend, 1, 0)) {
            h.initializeState(snapshot);
            h.open();
            for (int i = 0; i < 500; i++) {
                h.processElement("k" + (i % 7) + "," + i, 0);
            }
            assertThat(output(h)).isEmpty();
            h.processElement("k0,new", 0);
            assertThat(output(h)).containsExactly("k0,new");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void rescalesFromTwoToOneAndThree(Backend backend) throws Exception {
        int n = 2000;
        List<OperatorSubtaskState> parts = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            try (var h = DedupHarness.create(SMALL, backend, 2, subtask)) {
                h.open();
                for (int i = 0; i < n; i++) {
                    String e = "k" + (i % 50) + "," + i;
                    if (ownedBy(KeyedEvents.key(e), 2, subtask)) {
                        h.processElement(e, 0);
                    }
                }
                parts.add(h.snapshot(1, 1));
            }
        }
        OperatorSubtaskState merged =
                AbstractStreamOperatorTestHarness.repackageState(
                        parts.toArray(new OperatorSubtaskState[0]));
        for (int newParallelism : new int[] {1, 3}) {
            int passed = 0;
            int seen = 0;
            for (int subtask = 0; subtask < newParallelism; subtask++) {
                OperatorSubtaskState state =
                        AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                merged, DedupHarness.MAX_PARALLELISM, 2, newParallelism, subtask);
                try (var h = DedupHarness.create(SMALL, backend, newParallelism, subtask)) {
                    h.initializeState(state);
                    h.open();
                    for (int i = 0; i < n + 100; i++) {
                        String e = "k" + (i % 50) + "," + i;
                        if (ownedBy(KeyedEvents.key(e), newParallelism, subtask)) {
                            h.processElement(e, 0);
                            seen++;
                        }
                    }
                    passed += output(h).size();
                    for (String e : output(h)) {
                        assertThat(Integer.parseInt(KeyedEvents.id(e))).isGreaterThanOrEqualTo(n);
                    }
                }
            }
            assertThat(seen).isEqualTo(n + 100);
            // No duplicate let through; the 100 new ids pass (0.1% rate: none expected, 4.5
            // sigma allows at most 1 false drop).
            assertThat(passed).as("parallelism %d", newParallelism).isBetween(99, 100);
        }
    }

    private static boolean ownedBy(String key, int parallelism, int subtask) {
        int keyGroup =
                org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignToKeyGroup(
                        key, DedupHarness.MAX_PARALLELISM);
        return org.apache.flink.runtime.state.KeyGroupRangeAssignment
                        .computeOperatorIndexForKeyGroup(
                                DedupHarness.MAX_PARALLELISM, parallelism, keyGroup)
                == subtask;
    }

    @Test
    void cascadeKeepsTheRateWhenAKeyGetsHundredTimesItsExpectedItems() throws Exception {
        // 100 expected ids per key, 10,000 arrive. A new id is falsely dropped with the
        // cascade's compound rate (<= 1%): bound 4.5 sigma above 1% of 10,000 = 145.
        DedupConfig config = DedupConfig.builder().expectedItems(100).fpp(0.01).build();
        try (KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
                DedupHarness.create(config, Backend.HEAP, 1, 0)) {
            h.open();
            for (int i = 0; i < 10_000; i++) {
                h.processElement("a," + i, 0);
            }
            int falselyDropped = 10_000 - output(h).size();
            assertThat(falselyDropped).isLessThanOrEqualTo(145);
            for (int i = 0; i < 10_000; i++) {
                h.processElement("a," + i, 0);
            }
            assertThat(output(h)).hasSize(10_000 - falselyDropped); // every repeat dropped
        }
    }
}
