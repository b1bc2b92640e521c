package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.pagesInState;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.SavepointCompatibilityTest.Version;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.time.Duration;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link DedupMetrics}: every metric of the dedup operator, read back by name from the
 * operator's metric group, moves when it should, also in the run after a restore; the allocated
 * pages gauge equals the pages left in the keyed state after restores and frees.
 */
class DedupMetricsTest {

    /** Processes one event and judges its bundle, so the metrics count it now. */
    private static void process(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            String event,
            long timestamp)
            throws Exception {
        h.processElement(event, timestamp);
        DedupHarness.judge(h);
    }

    private static void process(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            StreamRecord<String> record)
            throws Exception {
        h.processElement(record);
        DedupHarness.judge(h);
    }

    /** 100 ids per key at 1%, scalable, remembered for 10 s of event time. */
    static DedupConfig tenSeconds() {
        return DedupConfig.builder()
                .expectedItems(100)
                .fpp(0.01)
                .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME)
                .build();
    }

    static KeyedOneInputStreamOperatorTestHarness<String, String, String> open(
            DedupConfig config, Backend backend, HarnessMetrics metrics, OperatorSubtaskState state)
            throws Exception {
        var h = DedupHarness.create(config, backend, metrics);
        if (state == null) {
            h.open();
        } else {
            h.initializeState(state);
            h.open();
        }
        return h;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void everyCounterAndGaugeMovesAndMovesAgainAfterARestore(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = open(tenSeconds(), backend, m, null)) {
            assertThat(m.number(DedupMetrics.WORST_FILL_RATIO)).isZero();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isZero();
            process(h, "a,1", 1_000);
            process(h, "a,1", 2_000); // duplicate
            process(h, "a,", 1_000); // no id
            process(h, new StreamRecord<>("a,2")); // no timestamp under event time
            // 300 ids of one key, three times its expected items: the cascade grows.
            for (int i = 0; i < 300; i++) {
                process(h, "b," + i, 3_000);
            }
            h.processWatermark(8_000);
            process(h, "a,3", 7_999); // behind the watermark
            assertThat(m.count(DedupMetrics.RECORDS_IN)).isEqualTo(305);
            // a,1 twice and 300 ids of b: a false drop among b's ids would be a duplicate.
            assertThat(m.count(DedupMetrics.PASSED) + m.count(DedupMetrics.DUPLICATES))
                    .isEqualTo(302);
            assertThat(m.count(DedupMetrics.DUPLICATES)).isBetween(1L, 10L);
            assertThat(m.count(DedupMetrics.REJECTED)).isEqualTo(2);
            assertThat(m.count(DedupMetrics.LATE)).isEqualTo(1);
            assertThat(m.count(DedupMetrics.OVER_CAPACITY)).as("scalable: never").isZero();
            assertThat(m.number(DedupMetrics.WORST_FILL_RATIO)).isBetween(0.01, 1.0);
            assertThat(m.number(DedupMetrics.ESTIMATED_FPP)).isBetween(1e-9, 0.05);
            assertThat(m.number(DedupMetrics.ESTIMATED_FPP)).as("reset by the read").isZero();
            assertThat(m.number(DedupMetrics.CASCADE_STAGES)).isGreaterThanOrEqualTo(2);
            assertThat(m.number(DedupMetrics.CASCADE_STAGES)).as("reset by the read").isZero();
            long pages = pagesInState(h);
            assertThat(pages).isPositive();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pages);
            snapshot = h.snapshot(1, 1);
        }

        try (HarnessMetrics after = new HarnessMetrics();
                var h = open(tenSeconds(), backend, after, snapshot)) {
            assertThat(after.count(DedupMetrics.RECORDS_IN)).as("a new run").isZero();
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).as("no key read yet").isZero();
            // remembered across the restore (3.5 s would be late: the watermark of 8 s is kept)
            process(h, "b,7", 8_500);
            process(h, "a,", 8_500);
            assertThat(after.count(DedupMetrics.RECORDS_IN)).isEqualTo(2);
            assertThat(after.count(DedupMetrics.DUPLICATES)).isEqualTo(1);
            assertThat(after.count(DedupMetrics.PASSED)).isZero();
            assertThat(after.count(DedupMetrics.REJECTED)).isEqualTo(1);
            assertThat(after.number(DedupMetrics.CASCADE_STAGES)).isGreaterThanOrEqualTo(2);
            assertThat(after.number(DedupMetrics.WORST_FILL_RATIO)).isPositive();
            assertThat(after.number(DedupMetrics.ESTIMATED_FPP)).isPositive();
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES))
                    .as("key b counted, key a not read yet")
                    .isPositive()
                    .isLessThan(pagesInState(h));
            h.processWatermark(8_000); // fires no timer: the first expiry is after 11 s
            process(h, "a,5", 7_000);
            assertThat(after.count(DedupMetrics.LATE)).isEqualTo(1);
            process(h, "a,6", 9_000);
            assertThat(after.count(DedupMetrics.PASSED)).isEqualTo(1);
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pagesInState(h));
            h.processWatermark(Long.MAX_VALUE); // frees every generation of both keys
            assertThat(pagesInState(h)).isZero();
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void widenedGenerationsAndOverCapacityAreCountedInEveryRun(Backend backend) throws Exception {
        // 10 ms buckets; 100 events of one key 1 s apart need 100 generations, past the 64 a key
        // can hold. A fixed filter for 10 ids gets 100.
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(10)
                        .fpp(0.01)
                        .fixed()
                        .retention(Duration.ofMillis(10), TimeDomain.EVENT_TIME)
                        .build();
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = open(config, backend, m, null)) {
            for (int i = 0; i < 100; i++) {
                process(h, "a," + i, 1_000L * i);
            }
            for (int i = 0; i < 20; i++) {
                process(h, "c," + i, 0); // 20 ids in one generation for 10
            }
            assertThat(m.count(DedupMetrics.WIDENED_GENERATIONS)).isPositive();
            assertThat(m.count(DedupMetrics.OVER_CAPACITY)).isPositive();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pagesInState(h));
            snapshot = h.snapshot(1, 1);
        }
        try (HarnessMetrics after = new HarnessMetrics();
                var h = open(config, backend, after, snapshot)) {
            for (int i = 100; i < 200; i++) {
                process(h, "a," + i, 1_000L * i);
            }
            for (int i = 0; i < 20; i++) {
                process(h, "d," + i, 0);
            }
            assertThat(after.count(DedupMetrics.WIDENED_GENERATIONS)).isPositive();
            assertThat(after.count(DedupMetrics.OVER_CAPACITY)).isPositive();
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES))
                    .as("key c not read since the restore")
                    .isLessThan(pagesInState(h));
            process(h, "c,0", 0);
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pagesInState(h));
            h.processWatermark(Long.MAX_VALUE);
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).isZero();
        }
    }

    /**
     * The committed layout-2 snapshot (5 keys, 1000 ids in 10 s of event time): keys k0 and k1 get
     * new ids a minute later, then the watermark frees every restored generation through timers,
     * most of them of keys no event has read since the restore. The gauge follows the pages left.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void allocatedPagesEqualThePagesLeftWhenTimersFreeRestoredState(Backend backend)
            throws Exception {
        Version v = Version.V0_2;
        try (HarnessMetrics m = new HarnessMetrics();
                var h =
                        open(
                                v.config,
                                backend,
                                m,
                                OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()))) {
            long restored = pagesInState(h);
            assertThat(restored).isPositive();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isZero();
            long later = v.time(0) + 60_000;
            for (int i = 0; i < 50; i++) {
                process(h, "k0,new" + i, later);
                process(h, "k1,new" + i, later);
            }
            long gauge = (long) m.number(DedupMetrics.ALLOCATED_PAGES);
            assertThat(gauge).isPositive().isLessThan(pagesInState(h));
            // Restored buckets end by t0 + 20 s; retention 30 s: all freed at t0 + 50 s.
            h.processWatermark(v.time(0) + 55_000);
            long left = pagesInState(h);
            assertThat(left).as("the new generations stay").isPositive();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(left);
            h.processWatermark(Long.MAX_VALUE);
            assertThat(pagesInState(h)).isZero();
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isZero();
        }
    }

    /**
     * Layout-1 state (bloomstream 0.1) records no page counts: a key's pages are counted when it is
     * first read after the restore, once.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void layout1StateIsCountedOnceWhenEachKeyIsFirstRead(Backend backend) throws Exception {
        Version v = Version.V0_1;
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h =
                        open(
                                v.config,
                                backend,
                                m,
                                OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()))) {
            for (int round = 0; round < 2; round++) {
                for (int k = 0; k < 5; k++) {
                    process(h, "k" + k + "," + k, 0); // id k of key k: remembered
                }
            }
            assertThat(m.count(DedupMetrics.DUPLICATES)).isEqualTo(10);
            assertThat(m.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pagesInState(h));
            snapshot = h.snapshot(2, 2);
        }
        try (HarnessMetrics after = new HarnessMetrics();
                var h = open(v.config, backend, after, snapshot)) {
            for (int k = 0; k < 5; k++) {
                process(h, "k" + k + ",new", 0);
            }
            assertThat(after.number(DedupMetrics.ALLOCATED_PAGES)).isEqualTo(pagesInState(h));
        }
    }
}
