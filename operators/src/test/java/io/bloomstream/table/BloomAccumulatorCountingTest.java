package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.CounterPages;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import io.bloomstream.table.internal.SqlArguments;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.table.api.dataview.MapView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The counting form of {@link CountDistinctAggFunction} called directly, against an exact model:
 * accumulators "in state" have pages in a {@code MapView} subclass (as Flink's state-backed views
 * are), so they apply every row; accumulators in memory (plain {@code MapView}: the local ones of
 * two-phase aggregation, batch) log rows and apply them when merged or read. for every legal
 * sequence of adds and retractions (a value is retracted only while present), however it is split
 * into local accumulators and merged, every counter equals the number of present occurrences hashed
 * to it, so the counters above zero are exactly the bits of a plain filter of the values present
 * and the estimate is the plain filter's.
 */
class BloomAccumulatorCountingTest {

    private static final long N = 2_000;
    private static final double FPP = 0.01;
    private static final String RETRACT = "retract";

    private final CountDistinctAggFunction f = new CountDistinctAggFunction();
    private final FilterSpec spec = SqlArguments.spec(CountDistinctAggFunction.NAME, N, FPP);

    /** An accumulator whose pages stand for state: not Flink's own {@code MapView} class. */
    private BloomAccumulator inState() {
        BloomAccumulator acc = f.createAccumulator();
        acc.pages = new MapView<>() {};
        return acc;
    }

    private void add(BloomAccumulator acc, String v) throws Exception {
        f.accumulate(acc, v, N, FPP, RETRACT);
    }

    private void retract(BloomAccumulator acc, String v) throws Exception {
        f.retract(acc, v, N, FPP, RETRACT);
    }

    /** The exact counters of a multiset: page -> (cell -> occurrences hashed there). */
    private Map<Long, Map<Long, Integer>> load(Map<String, Integer> present) {
        Map<Long, Map<Long, Integer>> load = new HashMap<>();
        long[] pos = new long[Sizing.MAX_HASHES];
        present.forEach(
                (v, r) -> {
                    Hash128 h = SqlArguments.hash(spec.hasher(), v);
                    spec.positions(h.h1(), h.h2(), pos);
                    Map<Long, Integer> page =
                            load.computeIfAbsent(spec.page(h.h1()), p -> new HashMap<>());
                    for (int i = 0; i < spec.hashes(); i++) {
                        page.merge(pos[i], r, Integer::sum);
                    }
                });
        return load;
    }

    /** Asserts that the accumulator's counters are exactly the model's, and nothing is pending. */
    private void assertExact(BloomAccumulator acc, Map<String, Integer> present) throws Exception {
        acc.applyLogs();
        Map<Long, Map<Long, Integer>> load = load(present);
        long nonZero = 0;
        for (Map<Long, Integer> page : load.values()) {
            nonZero += page.values().stream().filter(c -> c > 0).count();
        }
        assertThat(acc.setBits).as("counters above zero").isEqualTo(nonZero);
        for (Map.Entry<Long, long[]> e : acc.pages.entries()) {
            long page = e.getKey();
            assertThat(page).as("no retraction left pending").isNotNegative();
            long[] words = e.getValue();
            int width = CounterPages.width(spec, words);
            Map<Long, Integer> want = load.getOrDefault(page, Map.of());
            for (long cell = 0; cell < (long) Pages.words(spec) * 64; cell++) {
                assertThat(CounterPages.get(words, width, cell))
                        .as("page %d cell %d", page, cell)
                        .isEqualTo(want.getOrDefault(cell, 0));
            }
        }
        for (Map.Entry<Long, Map<Long, Integer>> e : load.entrySet()) {
            boolean any = e.getValue().values().stream().anyMatch(c -> c > 0);
            assertThat(acc.pages.contains(e.getKey())).as("page %d", e.getKey()).isEqualTo(any);
        }
        // the estimate is the plain filter's of the distinct values present
        BloomAccumulator plain = f.createAccumulator();
        for (String v : present.keySet()) {
            f.accumulate(plain, v, N, FPP);
        }
        assertThat(f.getValue(acc)).isEqualTo(f.getValue(plain));
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
    void legalChangelogInAnySplitMatchesTheExactCounters(long seed) throws Exception {
        Random random = new Random(seed);
        int pool = 50 + random.nextInt(1_500);
        Map<String, Integer> present = new HashMap<>();
        List<String> occurrences = new ArrayList<>();
        BloomAccumulator oneAcc = inState(); // one phase: every row on the state
        BloomAccumulator global = inState(); // two phase: bundles merged in order
        BloomAccumulator memory = f.createAccumulator(); // batch: every row in memory
        List<BloomAccumulator> waiting = new ArrayList<>(); // locals merged together first
        BloomAccumulator local = f.createAccumulator();
        int ops = 200 + random.nextInt(3 * CountingPages.LOG_LIMIT);
        // a third of the seeds in bundles past the log's limit, the rest in small bundles
        int bundleEnd = seed % 3 == 0 ? 2 * CountingPages.LOG_LIMIT : 50;
        for (int i = 0; i < ops; i++) {
            boolean retract = !occurrences.isEmpty() && random.nextInt(100) < 40;
            if (retract) {
                String v = occurrences.remove(random.nextInt(occurrences.size()));
                present.merge(v, -1, Integer::sum);
                present.remove(v, 0);
                retract(oneAcc, v);
                retract(memory, v);
                retract(local, v);
            } else {
                String v = "user-" + random.nextInt(pool);
                occurrences.add(v);
                present.merge(v, 1, Integer::sum);
                add(oneAcc, v);
                add(memory, v);
                add(local, v);
            }
            if (random.nextInt(bundleEnd) == 0) { // end of a bundle
                waiting.add(local);
                local = f.createAccumulator();
                if (random.nextBoolean()) {
                    // in memory, as Flink's global phase combines a bundle's locals, in any order
                    Collections.shuffle(waiting, random);
                    BloomAccumulator combined = f.createAccumulator();
                    f.merge(combined, waiting);
                    f.merge(global, List.of(combined));
                    waiting.clear();
                }
            }
        }
        waiting.add(local);
        for (BloomAccumulator w : waiting) {
            f.merge(global, List.of(w));
        }
        assertExact(oneAcc, present);
        assertExact(global, present);
        assertExact(memory, present);
    }

    @Test
    void aValueAddedTwiceAndRetractedOnceIsStillCounted() throws Exception {
        BloomAccumulator acc = inState();
        add(acc, "a");
        add(acc, "a");
        add(acc, "b");
        retract(acc, "a");
        retract(acc, "b");
        assertThat(f.getValue(acc)).isEqualTo(1L);
        assertExact(acc, Map.of("a", 1));
        retract(acc, "a");
        assertThat(f.getValue(acc)).isZero();
        assertThat(acc.pages.isEmpty()).as("a page with no counter left is removed").isTrue();
    }

    @Test
    void aHeavyValueWidensItsPageOnlyAndStaysExact() throws Exception {
        BloomAccumulator acc = inState();
        String other = otherPageValue("heavy");
        add(acc, other);
        for (int i = 0; i < 300; i++) {
            add(acc, "heavy");
        }
        long page = page("heavy");
        assertThat(CounterPages.width(spec, acc.pages.get(page))).isEqualTo(16);
        assertThat(CounterPages.width(spec, acc.pages.get(page(other)))).isEqualTo(4);
        assertExact(acc, Map.of("heavy", 300, other, 1));
        for (int i = 0; i < 299; i++) {
            retract(acc, "heavy");
        }
        assertExact(acc, Map.of("heavy", 1, other, 1));
    }

    @Test
    void aStickyCounterNeverGoesDownSoTheValueStaysCounted() throws Exception {
        BloomAccumulator acc = inState();
        for (int i = 0; i < CounterPages.STICKY + 10; i++) {
            add(acc, "hot");
        }
        long setBits = acc.setBits;
        for (int i = 0; i < CounterPages.STICKY + 100; i++) {
            retract(acc, "hot");
        }
        // more retractions than a 16-bit counter holds: the counters stick, never go below zero
        assertThat(acc.setBits).isEqualTo(setBits).isPositive();
        assertThat(f.getValue(acc)).isEqualTo(1L);
        long[] words = acc.pages.get(page("hot"));
        for (int c = 0; c < spec.hashes(); c++) {
            assertThat(CounterPages.get(words, 16, position("hot", c)))
                    .isEqualTo(CounterPages.STICKY);
        }
    }

    @Test
    void aRetractionOfAValueNeverAddedChangesNoCounter() throws Exception {
        BloomAccumulator acc = inState();
        Map<String, Integer> present = new HashMap<>();
        for (int i = 0; i < 500; i++) {
            add(acc, "user-" + i);
            present.put("user-" + i, 1);
        }
        long before = f.getValue(acc);
        retract(acc, "never-added");
        assertThat(f.getValue(acc)).isEqualTo(before);
        // the retraction waits pending (for a merge into the accumulator that has the value)
        assertThat(acc.pages.contains(-1 - page("never-added"))).isTrue();
        acc.pages.remove(-1 - page("never-added"));
        assertExact(acc, present);
    }

    @Test
    void aPendingRetractionCancelsTheValueWhenMergedIntoTheAccumulatorThatHasIt() throws Exception {
        BloomAccumulator global = inState();
        add(global, "a");
        add(global, "b");
        BloomAccumulator local = f.createAccumulator();
        retract(local, "a");
        add(local, "c");
        f.merge(global, List.of(local));
        assertExact(global, Map.of("b", 1, "c", 1));
        assertThat(f.getValue(global)).isEqualTo(2L);
    }

    @Test
    void aPendingRetractionWithNothingToCancelStaysPendingAndNeverNegative() throws Exception {
        BloomAccumulator global = inState();
        add(global, "b");
        BloomAccumulator local = f.createAccumulator();
        retract(local, "a"); // never added anywhere: an illegal changelog
        f.merge(global, List.of(local));
        assertThat(f.getValue(global)).isEqualTo(1L);
        assertThat(global.pages.contains(-1 - page("a"))).isTrue();
        long[] words = global.pages.get(page("b"));
        assertThat(words).isNotNull();
    }

    @Test
    void anAccumulatorInMemoryShipsHashesNotPagesUntilItsLogIsFull() throws Exception {
        BloomAccumulator local = f.createAccumulator();
        for (int i = 0; i < 100; i++) {
            add(local, "user-" + i);
        }
        retract(local, "user-0");
        assertThat(local.pages.keys())
                .containsExactlyInAnyOrder(BloomAccumulator.ADD_LOG, BloomAccumulator.RETRACT_LOG);
        assertThat(local.pages.get(BloomAccumulator.ADD_LOG)[0]).isEqualTo(100);
        for (int i = 100; i < CountingPages.LOG_LIMIT; i++) {
            add(local, "user-" + i);
        }
        assertThat(local.pages.contains(BloomAccumulator.ADD_LOG)).isFalse();
        Map<String, Integer> present = new HashMap<>();
        for (int i = 1; i < CountingPages.LOG_LIMIT; i++) {
            present.put("user-" + i, 1);
        }
        assertExact(local, present);
    }

    @Test
    void aRetractionPendingInMemoryWaitsForAnAddStillInAnotherLog() throws Exception {
        // two local bundles combined in memory, then merged into state (Flink's global phase):
        // the first holds +v in its log, the second -v pending (its log was applied when full)
        BloomAccumulator l1 = f.createAccumulator();
        add(l1, "v");
        BloomAccumulator l2 = f.createAccumulator();
        retract(l2, "v");
        for (int i = 0; i < CountingPages.LOG_LIMIT; i++) {
            add(l2, "w");
        }
        assertThat(l2.pages.contains(-1 - page("v"))).as("-v pending in l2").isTrue();
        BloomAccumulator combined = f.createAccumulator();
        f.merge(combined, List.of(l2, l1));
        BloomAccumulator global = inState();
        f.merge(global, List.of(combined));
        assertExact(global, Map.of("w", CountingPages.LOG_LIMIT));
        assertThat(f.getValue(global)).isEqualTo(1L);
    }

    @Test
    void slicesMergedNewestFirstInMemoryCountOnlyWhatIsPresent() throws Exception {
        // a hopping window merges its slices into a fresh accumulator, newest first, and reads it
        BloomAccumulator older = inState();
        add(older, "v");
        add(older, "x");
        BloomAccumulator newer = f.createAccumulator();
        retract(newer, "v");
        newer.applyLogs(); // a slice's retraction of a value of an older slice: pending
        BloomAccumulator window = f.createAccumulator();
        f.merge(window, List.of(newer, older));
        assertThat(f.getValue(window)).isEqualTo(1L);
        assertExact(window, Map.of("x", 1));
    }

    @Test
    void plainAndCountingAccumulatorsNeverMix() throws Exception {
        BloomAccumulator plain = f.createAccumulator();
        f.accumulate(plain, "a", N, FPP);
        BloomAccumulator counting = f.createAccumulator();
        add(counting, "a");
        assertThatThrownBy(() -> f.merge(plain, List.of(counting)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("counting (layout 2)")
                .hasMessageContaining("plain (layout 1)");
        assertThatThrownBy(() -> add(plain, "b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("counting (layout 2)");
        CountDistinctAggFunction g = new CountDistinctAggFunction();
        assertThatThrownBy(() -> g.accumulate(counting, "b", N, FPP))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain (layout 1)");
    }

    @Test
    void aModeOtherThanRetractIsRefused() {
        CountDistinctAggFunction g = new CountDistinctAggFunction();
        assertThatThrownBy(() -> g.accumulate(g.createAccumulator(), "a", N, FPP, "retrac"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("argument 'mode' must be 'retract', was 'retrac'");
    }

    private long page(String v) {
        return spec.page(SqlArguments.hash(spec.hasher(), v).h1());
    }

    private long position(String v, int i) {
        Hash128 h = SqlArguments.hash(spec.hasher(), v);
        return spec.position(h.h1(), h.h2(), i);
    }

    private String otherPageValue(String v) {
        for (int i = 0; ; i++) {
            if (page("other-" + i) != page(v)) {
                return "other-" + i;
            }
        }
    }
}
