package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.dedup.DedupJudges;
import io.bloomstream.flink.state.FilterJudge;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.FilterMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.table.api.dataview.MapView;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link SqlDedupStore}: the judge ({@link FilterJudge}) over a key's {@code MapView}s,
 * as {@code BLOOM_DEDUP} binds them, with and without the task's cache. What a call leaves in the
 * views is what a snapshot taken right after it holds, so a task with a new cache (a restore) over
 * the same views must find every id again.
 */
class SqlDedupStoreTest {

    private static final long R = 10_000;

    /** A partition key's views, counting the writes of the timer config. */
    private static final class Views {
        int timerConfigPuts;
        final MapView<Integer, byte[]> meta =
                new MapView<>() {
                    @Override
                    public void put(Integer key, byte[] value) throws Exception {
                        if (key == SqlDedupLayout.TIMER_CONFIG_KEY) {
                            timerConfigPuts++;
                        }
                        super.put(key, value);
                    }
                };
        final MapView<Long, byte[]> pages = new MapView<>();
    }

    private static final FilterMetrics NO_METRICS =
            new FilterMetrics() {
                @Override
                public void observe(long items, long bits, int hashes, int pageBits, int stages) {}

                @Override
                public void pagesAllocated(long delta) {}

                @Override
                public void generationWidened() {}

                @Override
                public void overCapacity() {}
            };

    /** A task: the judge of {@code config} and a store over whichever key a row belongs to. */
    private static final class Task {
        final FilterJudge judge;
        final DedupStateCache cache;
        final SqlDedupStore store;

        Task(DedupConfig config, long itemsPerKey, boolean cached) {
            judge = DedupJudges.create(config, itemsPerKey, NO_METRICS, 1, true);
            cache = cached ? DedupStateCache.forConfig(config) : null;
            store = new SqlDedupStore(cache);
            store.recordTimerConfig(config.retentionMillis(), config.generations());
        }

        boolean add(Views key, String id, long time) throws Exception {
            DedupStateCache.Entry entry = cache == null ? null : cache.entry(key);
            store.bind(key.meta, key.pages, entry);
            FilterJudge.IdHash hash = (hasher, out) -> out[0] = out[1] = hasher.hash64(id);
            try {
                return judge.addIfAbsent(store, key, hash, time, time);
            } finally {
                if (cache != null) {
                    cache.trim(entry);
                }
            }
        }

        long[] expireAt(Views key, long time) throws Exception {
            if (cache != null) {
                cache.clear();
            }
            return judge.expireAt(store.bind(key.meta, key.pages, null), time);
        }
    }

    private static DedupConfig plain(long items) {
        return DedupConfig.builder().expectedItems(items).fpp(0.01).build();
    }

    private static DedupConfig retained() {
        return DedupConfig.builder()
                .expectedItems(1000)
                .fpp(0.01)
                .retention(Duration.ofMillis(R), TimeDomain.EVENT_TIME)
                .build();
    }

    private static FilterMeta stored(Views key) throws Exception {
        return new SqlDedupStore(null).bind(key.meta, key.pages, null).readMeta();
    }

    /**
     * 20,000 distinct ids into a cascade sized for 10,000 at 1%, then a task with a new cache over
     * the same views (a restore) judges every id again: none passes (no false negatives). The
     * compound rate is at most 1%: false positives are binomial with mean at most 200 (sd 14), so
     * more than 300 (7 sd) fails by chance at about 1e-12.
     */
    @Test
    void everyChangeIsInTheViewsWhenACallReturns() throws Exception {
        for (boolean cached : new boolean[] {true, false}) {
            Views key = new Views();
            Task task = new Task(plain(10_000), 10_000, cached);
            SplittableRandom random = new SplittableRandom(42);
            List<String> ids = new ArrayList<>();
            int falsePositives = 0;
            for (int i = 0; i < 20_000; i++) {
                String id = Long.toHexString(random.nextLong());
                ids.add(id);
                if (!task.add(key, id, 0)) {
                    falsePositives++;
                }
            }
            assertThat(falsePositives).as("cached %s", cached).isLessThanOrEqualTo(300);
            Task restored = new Task(plain(10_000), 10_000, true);
            for (String id : ids) {
                assertThat(restored.add(key, id, 0)).as("cached %s: %s", cached, id).isFalse();
            }
            assertThat(stored(key).slots.get(0)).hasSizeGreaterThan(1);
        }
    }

    /**
     * With the cache (no retention) item counts alone lag: the views count at least every item
     * added, at most the limit less one more; without it they are exact.
     */
    @Test
    void itemCountsLagOnlyWithinTheLimitAndOnlyWithTheCache() throws Exception {
        for (boolean cached : new boolean[] {true, false}) {
            Views key = new Views();
            Task task = new Task(plain(100_000), 100_000, cached);
            SplittableRandom random = new SplittableRandom(7);
            long passed = 0;
            for (int i = 0; i < 5000; i++) {
                passed += task.add(key, Long.toString(random.nextLong()), 0) ? 1 : 0;
                FilterMeta meta = stored(key);
                long items = meta.slots.get(0).get(0).itemsAdded;
                if (cached) {
                    assertThat(items).isBetween(passed, passed + SqlDedupLayout.deferLimit(meta));
                } else {
                    assertThat(items).isEqualTo(passed);
                    assertThat(key.meta.contains(SqlDedupLayout.DEFERRED_META_KEY)).isFalse();
                }
            }
        }
    }

    /**
     * Under a retention each key records the retention once (not per row), generations expire
     * through the views, and a key with nothing left has no state at all.
     */
    @Test
    void recordsTheTimerConfigOnceAndExpiresThroughTheViews() throws Exception {
        Views key = new Views();
        Task task = new Task(retained(), 1000, true);
        assertThat(task.add(key, "a", 0)).isTrue();
        long first = task.judge.newExpiry();
        for (int i = 0; i < 100; i++) {
            task.add(key, "id-" + i, 10);
        }
        assertThat(key.timerConfigPuts).isEqualTo(1);
        byte[] config = key.meta.get(SqlDedupLayout.TIMER_CONFIG_KEY);
        assertThat(SqlDedupLayout.timerRetentionMillis(config)).isEqualTo(R);
        assertThat(SqlDedupLayout.timerGenerations(config)).isEqualTo(2);
        assertThat(task.add(key, "b", 3 * R)).isTrue();
        long second = task.judge.newExpiry();
        assertThat(task.expireAt(key, first)).containsExactly(second);
        assertThat(task.add(key, "a", 3 * R)).as("a's generation was freed").isTrue();
        assertThat(task.expireAt(key, Long.MAX_VALUE)).isEmpty();
        assertThat(key.meta.isEmpty()).isTrue();
        assertThat(key.pages.isEmpty()).isTrue();
    }

    /**
     * Exact entries are kept per generation slot: dropping a slot removes only its entries (the
     * key's other slots keep theirs), and clearing the key removes them all.
     */
    @Test
    void exactEntriesAreDroppedPerSlotAndClearedWithTheKey() throws Exception {
        Views key = new Views();
        MapView<String, Boolean> exact = new MapView<>();
        SqlDedupStore store = new SqlDedupStore(null).bind(key.meta, key.pages, exact, null);
        store.exactKey("a");
        store.exactAdd(0);
        store.exactAdd(2);
        store.exactKey("b");
        store.exactAdd(2);
        assertThat(store.exactContains(0)).isFalse();
        assertThat(store.exactContains(2)).isTrue();
        store.exactKey("a");
        assertThat(store.exactContains(0)).isTrue();
        assertThat(store.exactContains(1)).isFalse();

        store.dropSlots(1L << 2);
        assertThat(store.exactContains(0)).as("slot 0 kept").isTrue();
        assertThat(store.exactContains(2)).isFalse();
        assertThat(exact.keys()).containsExactly(SqlDedupLayout.exactEntry(0, "a"));

        store.clear();
        assertThat(exact.isEmpty()).isTrue();
    }
}
