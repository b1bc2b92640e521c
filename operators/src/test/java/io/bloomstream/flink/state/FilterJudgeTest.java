package io.bloomstream.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link FilterJudge}, over a {@link MemoryStore}: no Flink state involved. */
class FilterJudgeTest {

    private static final Hasher HASHER = Hasher.xxh3_64(0);
    private static final long R = 10_000;

    /** Metrics that count what the judge reports. */
    static final class Counted implements FilterMetrics {
        long pages;
        int widened;
        int overCapacity;
        int exactReads;
        int exactMisses;

        @Override
        public void exactRead(boolean found) {
            exactReads++;
            if (!found) {
                exactMisses++;
            }
        }

        @Override
        public void observe(long items, long bits, int hashes, int pageBits, int stages) {}

        @Override
        public void pagesAllocated(long delta) {
            pages += delta;
        }

        @Override
        public void generationWidened() {
            widened++;
        }

        @Override
        public void overCapacity() {
            overCapacity++;
        }
    }

    private static FilterJudge.Settings settings(
            long items, double fpp, long retention, int generations, boolean reset) {
        return settings(items, fpp, retention, generations, reset, false);
    }

    private static FilterJudge.Settings settings(
            long items, double fpp, long retention, int generations, boolean reset, boolean exact) {
        FilterSizing sizing = FilterSizing.builder().expectedItems(items).fpp(fpp).build();
        long length = retention == 0 ? 0 : retention / (generations - 1);
        long perGeneration = retention == 0 ? items : items / (generations - 1);
        return new FilterJudge.Settings(
                new StageShapes(sizing, perGeneration, fpp / generations),
                true,
                new GenerationPolicy(retention, 0),
                retention == 0
                        ? FilterMeta.DOMAIN_NONE
                        : StateLayout.domainOf(
                                io.bloomstream.flink.Retention.builder(
                                                Duration.ofMillis(retention), TimeDomain.EVENT_TIME)
                                        .generations(generations)
                                        .build()),
                length,
                retention == 0 ? 1 : generations,
                HASHER,
                reset,
                exact,
                "test");
    }

    private static boolean add(FilterJudge judge, MemoryStore store, String id, long time)
            throws Exception {
        long h = HASHER.hash64(id);
        store.exactKey = ExactKeys.ofString(id);
        return judge.addIfAbsent(store, "key", h, h, time, time);
    }

    @Test
    void passesAFirstOccurrenceAndDropsEveryRepeat() throws Exception {
        Counted metrics = new Counted();
        FilterJudge judge = new FilterJudge(settings(1000, 0.01, 0, 2, false), metrics, 1, false);
        MemoryStore store = new MemoryStore();
        assertThat(add(judge, store, "a", 0)).isTrue();
        assertThat(add(judge, store, "a", 0)).isFalse();
        assertThat(add(judge, store, "b", 0)).isTrue();
        assertThat(store.meta.slots.get(0).get(0).itemsAdded).isEqualTo(2);
        assertThat(metrics.pages).isEqualTo(store.pages.size());
    }

    /**
     * No false negatives, and the false-positive rate within its bound, against an exact set:
     * 20,000 distinct ids into a cascade sized for 10,000 at 1% (it grows a stage), then every id
     * again. The compound rate of the scalable cascade is at most fpp = 1%; over the 20,000 first
     * occurrences the count of false positives is binomial with mean at most 200 (sd 14): more than
     * 300 (7 sd) fails by chance at about 1e-12.
     */
    @Test
    void neverForgetsAndKeepsTheRateBoundPastCapacity() throws Exception {
        FilterJudge judge =
                new FilterJudge(settings(10_000, 0.01, 0, 2, false), new Counted(), 1, false);
        MemoryStore store = new MemoryStore();
        SplittableRandom random = new SplittableRandom(42);
        List<String> ids = new ArrayList<>();
        int falsePositives = 0;
        for (int i = 0; i < 20_000; i++) {
            String id = Long.toHexString(random.nextLong());
            ids.add(id);
            if (!add(judge, store, id, 0)) {
                falsePositives++;
            }
        }
        for (String id : ids) {
            assertThat(add(judge, store, id, 0)).as(id).isFalse();
        }
        assertThat(store.meta.slots.get(0)).hasSizeGreaterThan(1);
        assertThat(falsePositives).isLessThanOrEqualTo(300);
    }

    /**
     * Without reset an id is remembered from its first occurrence: a repeat every 0.9 R passes
     * again once it is at least R + L (here 2R) past the first. With reset each repeat refreshes
     * it: only the first passes.
     */
    @Test
    void aDuplicateRefreshesTheRetentionOnlyWhenAsked() throws Exception {
        for (boolean reset : new boolean[] {false, true}) {
            FilterJudge judge =
                    new FilterJudge(settings(1000, 0.001, R, 2, reset), new Counted(), 1, false);
            MemoryStore store = new MemoryStore();
            List<Long> passed = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                long t = i * 9 * R / 10;
                if (add(judge, store, "a", t)) {
                    passed.add(t);
                }
            }
            if (reset) {
                assertThat(passed).as("reset").containsExactly(0L);
            } else {
                assertThat(passed).as("no reset").hasSizeGreaterThan(1).startsWith(0L);
                for (int i = 1; i < passed.size(); i++) {
                    assertThat(passed.get(i) - passed.get(i - 1)).isGreaterThanOrEqualTo(R);
                }
            }
        }
    }

    @Test
    void aDuplicateInItsOwnGenerationIsNotWrittenAgainUnderReset() throws Exception {
        FilterJudge judge =
                new FilterJudge(settings(1000, 0.001, R, 2, true), new Counted(), 1, false);
        MemoryStore store = new MemoryStore();
        assertThat(add(judge, store, "a", 100)).isTrue();
        int writes = store.metaWrites;
        assertThat(add(judge, store, "a", 101)).isFalse();
        assertThat(store.metaWrites).as("metadata writes of a plain duplicate").isEqualTo(writes);
    }

    @Test
    void expiresGenerationsAndClearsAKeyWithNothingLeft() throws Exception {
        Counted metrics = new Counted();
        FilterJudge judge = new FilterJudge(settings(1000, 0.01, R, 2, false), metrics, 1, false);
        MemoryStore store = new MemoryStore();
        assertThat(add(judge, store, "a", 0)).isTrue();
        long first = judge.newExpiry();
        assertThat(first).isGreaterThan(R);
        assertThat(add(judge, store, "b", 3 * R)).isTrue();
        long second = judge.newExpiry();
        assertThat(judge.expireAt(store, first)).containsExactly(second);
        assertThat(add(judge, store, "a", 3 * R)).as("a's generation was freed").isTrue();
        assertThat(judge.expireAt(store, Long.MAX_VALUE)).isEmpty();
        assertThat(store.meta).isNull();
        assertThat(store.pages).isEmpty();
        assertThat(metrics.pages).isZero();
    }

    @Test
    void anItemCountAloneIsWrittenAsCountsOnly() throws Exception {
        FilterJudge judge =
                new FilterJudge(settings(100_000, 0.01, 0, 2, false), new Counted(), 1, false);
        MemoryStore store = new MemoryStore();
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 5000; i++) {
            add(judge, store, Long.toString(random.nextLong()), 0);
        }
        assertThat(store.countsOnlyWrites).isGreaterThan(0);
        assertThat(store.metaWrites - store.countsOnlyWrites)
                .as("structural writes: one per new page, the first also the new key's")
                .isEqualTo(store.pages.size());
    }

    /**
     * Exact mode behind a deliberately bad filter (fpp 0.3, ten times its expected items, so the
     * filter alone would drop hundreds of these first occurrences): every one of 5,000 distinct ids
     * passes, every repeat is dropped, and a first occurrence read the exact entries only on a
     * false "maybe" (a new id whose filter says no costs no read).
     */
    @Test
    void exactModePassesEveryFirstOccurrenceBehindABadFilter() throws Exception {
        Counted metrics = new Counted();
        FilterJudge.Settings s = settings(500, 0.3, 0, 2, false, true);
        FilterJudge.Settings fixed =
                new FilterJudge.Settings(
                        s.shapes(),
                        false,
                        s.generations(),
                        s.domain(),
                        s.generationMillis(),
                        s.generationCount(),
                        s.hasher(),
                        false,
                        true,
                        "fixed");
        FilterJudge judge = new FilterJudge(fixed, metrics, 1, false);
        MemoryStore store = new MemoryStore();
        SplittableRandom random = new SplittableRandom(31);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            String id = Long.toHexString(random.nextLong());
            ids.add(id);
            assertThat(add(judge, store, id, 0)).as("first occurrence of %s", id).isTrue();
        }
        assertThat(metrics.exactMisses).as("false positives caught").isGreaterThan(2500);
        int readsOfFirsts = store.exactReads;
        assertThat(readsOfFirsts).isEqualTo(metrics.exactReads).isEqualTo(metrics.exactMisses);
        for (String id : ids) {
            assertThat(add(judge, store, id, 0)).as("repeat of %s", id).isFalse();
        }
        assertThat(store.exact.get(0)).hasSize(5000);
        assertThat(metrics.exactReads - readsOfFirsts).as("a repeat reads").isGreaterThan(4999);
    }

    /** Exact entries expire with their generation and go with the key's state. */
    @Test
    void exactEntriesExpireWithTheirGeneration() throws Exception {
        FilterJudge judge =
                new FilterJudge(settings(1000, 0.3, R, 2, false, true), new Counted(), 1, false);
        MemoryStore store = new MemoryStore();
        assertThat(add(judge, store, "a", 0)).isTrue();
        long first = judge.newExpiry();
        assertThat(add(judge, store, "b", 3 * R)).isTrue();
        assertThat(store.exact.values()).hasSize(2);
        judge.expireAt(store, first);
        assertThat(store.exact.values())
                .hasSize(1)
                .allSatisfy(s -> assertThat(s).containsOnly("b"));
        assertThat(judge.expireAt(store, Long.MAX_VALUE)).isEmpty();
        assertThat(store.exact).isEmpty();
    }

    @Test
    void inExactModeTheOverCapacityWarningSaysWhatItCostsNotThatAnswersAreWrong() {
        assertThat(FilterJudge.overCapacityMessage(false))
                .contains("its false-positive rate now exceeds the target");
        assertThat(FilterJudge.overCapacityMessage(true))
                .doesNotContain("exceeds the target")
                .contains("no answer is wrong")
                .contains("costs a read of the exact entries");
    }
}
