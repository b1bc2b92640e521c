package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

/**
 * Tests for the set-bit counts that {@link CountState} keeps per stage as pages change: after
 * random adds (jqwik, fixed seeds: filters of one to a few thousand items, fixed and scalable
 * growth so cascades of several stages, running counts and windows, repeats, a snapshot and restore
 * at a random point, both backends) every stage's recorded count equals a full scan of its pages,
 * and every emitted estimate equals the estimate computed from that scan (as emissions computed it
 * before the counts were kept). Exact equalities: no statistical bound.
 */
class CountSetBitsTest {

    record Scenario(
            long expectedItems,
            boolean fixed,
            long windowMillis,
            int keys,
            int events,
            int idRange,
            long seed,
            double restoreAt) {}

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<Long> expected = Arbitraries.of(1L, 5L, 50L, 300L, 2000L);
        Arbitrary<Boolean> fixed = Arbitraries.of(true, false);
        Arbitrary<Long> window = Arbitraries.of(0L, 0L, 100L);
        Arbitrary<Integer> keys = Arbitraries.integers().between(1, 4);
        Arbitrary<Integer> events = Arbitraries.integers().between(0, 3000);
        Arbitrary<Integer> ids = Arbitraries.of(10, 500, 5000);
        return Combinators.combine(
                        expected,
                        fixed,
                        window,
                        keys,
                        events,
                        ids,
                        Arbitraries.longs(),
                        Arbitraries.doubles().between(0, 1))
                .as(Scenario::new);
    }

    @Property(tries = 40, seed = "1313", edgeCases = EdgeCasesMode.MIXIN)
    void heapCountsEqualAScan(@ForAll("scenarios") Scenario s) throws Exception {
        check(s, Backend.HEAP);
    }

    @Property(tries = 12, seed = "1314", edgeCases = EdgeCasesMode.MIXIN)
    void rocksDbCountsEqualAScan(@ForAll("scenarios") Scenario s) throws Exception {
        check(s, Backend.ROCKSDB);
    }

    private static void check(Scenario s, Backend backend) throws Exception {
        FilterSizing.Builder filter = FilterSizing.builder().expectedItems(s.expectedItems());
        if (s.fixed()) {
            filter.fixed();
        }
        CountConfig.Builder b =
                CountConfig.builder()
                        .filter(filter.build())
                        .timeDomain(TimeDomain.EVENT_TIME)
                        .interval(Duration.ofHours(1));
        if (s.windowMillis() > 0) {
            b.window(Duration.ofMillis(s.windowMillis()));
        }
        CountConfig config = b.build();
        Hasher hasher = config.hasher();
        Random random = new Random(s.seed());
        int restoreAt = (int) (s.restoreAt() * s.events());
        OperatorSubtaskState snapshot;
        try (var h = CountFunctionTest.harness(config, backend)) {
            h.open();
            add(h, s, random, 0, restoreAt);
            assertCountsEqualAScan(h, s, hasher);
            snapshot = h.snapshot(1, 1);
        }
        try (var h = CountFunctionTest.harness(config, backend)) {
            h.initializeState(snapshot);
            h.open();
            add(h, s, random, restoreAt, s.events());
            Map<String, Estimate> expected = assertCountsEqualAScan(h, s, hasher);
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            Map<String, CountEstimate> finals = new HashMap<>();
            for (CountEstimate e : h.extractOutputValues()) {
                if (e.isFinal) {
                    finals.put(e.key + "@" + e.windowStart, e);
                }
            }
            // Windows closed before the end were checked when they closed; the ones open at the
            // end have their final record now.
            for (Map.Entry<String, Estimate> e : expected.entrySet()) {
                CountEstimate got = finals.get(e.getKey());
                assertThat(got).as("%s: final record of %s", s, e.getKey()).isNotNull();
                CountEstimate want = CountEstimate.of(got.key, e.getValue(), got.stages, 0, true);
                assertThat(got.bitsSet).as("%s", s).isEqualTo(want.bitsSet);
                assertThat(got.bits).as("%s", s).isEqualTo(want.bits);
                assertThat(Double.valueOf(got.estimate)) // NaN if saturated: compared boxed
                        .as("%s", s)
                        .isEqualTo(Double.valueOf(want.estimate));
                assertThat(Double.valueOf(got.standardError))
                        .as("%s", s)
                        .isEqualTo(Double.valueOf(want.standardError));
                assertThat(got.valid).as("%s", s).isEqualTo(want.valid);
                assertThat(got.saturated).as("%s", s).isEqualTo(want.saturated);
            }
        }
    }

    /** Events {@code from} to {@code to}; under windows, time moves through about five windows. */
    private static void add(
            KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> h,
            Scenario s,
            Random random,
            int from,
            int to)
            throws Exception {
        for (int i = from; i < to; i++) {
            String key = "k" + random.nextInt(s.keys());
            long time = s.windowMillis() == 0 ? 1 : 5L * s.windowMillis() * i / s.events();
            h.processElement(key + ",id-" + random.nextInt(s.idRange()), time);
        }
    }

    /**
     * Asserts that each open window's recorded set bits equal a scan of its pages, and returns the
     * scan's estimate per "key@windowStart" (windowStart as {@link CountEstimate} gives it).
     */
    private static Map<String, Estimate> assertCountsEqualAScan(
            KeyedOneInputStreamOperatorTestHarness<String, String, CountEstimate> h,
            Scenario s,
            Hasher hasher)
            throws Exception {
        CountStateScan state = CountStateScan.count(h);
        Map<String, Estimate> estimates = new HashMap<>();
        for (int k = 0; k < s.keys(); k++) {
            String key = "k" + k;
            FilterMeta meta = state.meta(key);
            if (meta == null) {
                continue;
            }
            Map<Long, long[]> pages = state.pages(key);
            for (int slot = 0; slot < meta.generations(); slot++) {
                if (meta.buckets[slot] == FilterMeta.EMPTY) {
                    continue;
                }
                List<FilterMeta.Stage> stages = meta.slots.get(slot);
                long[] scanned = CountStateScan.scan(pages, slot, stages.size());
                for (int i = 0; i < stages.size(); i++) {
                    assertThat(stages.get(i).setBits)
                            .as("%s: key %s slot %d stage %d", s, key, slot, i)
                            .isEqualTo(scanned[i]);
                }
                long windowStart =
                        s.windowMillis() == 0
                                ? Long.MIN_VALUE
                                : meta.buckets[slot] * s.windowMillis();
                estimates.put(
                        key + "@" + windowStart,
                        CountStateScan.estimate(meta, slot, scanned, hasher));
            }
        }
        return estimates;
    }
}
