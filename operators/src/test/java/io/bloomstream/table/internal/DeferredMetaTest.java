package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.time.Duration;
import java.util.Random;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.table.api.dataview.MapView;
import org.junit.jupiter.api.Test;

/**
 * Deferred item counts of {@code BLOOM_DEDUP} ({@link SqlDedupLayout#DEFERRED_META_KEY}, written by
 * {@link SqlDedupStore#writeMeta} with {@code countsOnly}): item counts written late, and read back
 * as at least the true count, at most the lag limit above it.
 */
class DeferredMetaTest {

    private final MapView<Integer, byte[]> view = new MapView<>();
    private final MapView<Long, byte[]> pages = new MapView<>();

    /** A key's metadata with one generation and one stage of {@code capacity} items. */
    private static FilterMeta meta(long capacity) {
        FilterMeta m =
                FilterMeta.forDedup(Hasher.xxh3(Hasher.DEFAULT_SEED), FilterMeta.DOMAIN_NONE, 0, 0);
        int slot = m.addSlot();
        m.buckets[slot] = 0;
        m.lastBuckets[slot] = 0;
        m.slots.get(slot).add(new FilterMeta.Stage(8192, 6, 512, capacity, 0));
        return m;
    }

    private static long items(FilterMeta m) {
        return m.slots.get(0).get(m.slots.get(0).size() - 1).itemsAdded;
    }

    private long stored(int key) throws Exception {
        byte[] b = view.get(key);
        return b == null ? -1 : items(FilterMetaSerializer.INSTANCE.deserialize(in(b)));
    }

    private static DataInputDeserializer in(byte[] b) {
        return new DataInputDeserializer(b);
    }

    /** The store as the function binds it to the key's views, reading and writing its metadata. */
    private final class Bound {
        final SqlDedupStore store;

        Bound(DedupStateCache cache, DedupStateCache.Entry entry) {
            store = new SqlDedupStore(cache).bind(view, pages, entry);
        }

        FilterMeta value() throws Exception {
            return store.readMeta();
        }

        void update(FilterMeta m) throws Exception {
            store.writeMeta(m, false);
        }

        void updateCounts(FilterMeta m) throws Exception {
            store.writeMeta(m, true);
        }
    }

    private Bound bound(DedupStateCache cache, DedupStateCache.Entry entry) {
        return new Bound(cache, entry);
    }

    @Test
    void bloomDedupsCacheDefersExactlyWithoutRetention() {
        DedupConfig plain = DedupConfig.builder().expectedItems(1000).fpp(0.01).build();
        DedupConfig retained =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .fpp(0.01)
                        .retention(Duration.ofMinutes(1), TimeDomain.EVENT_TIME)
                        .build();
        assertThat(DedupStateCache.forConfig(plain).defers()).isTrue();
        assertThat(DedupStateCache.forConfig(retained).defers()).isFalse();
        assertThat(new DedupStateCache(0, true).defers()).as("no cache").isFalse();
    }

    @Test
    void countsAreWrittenEveryLimitChangesAndAReadCountsTheLag() throws Exception {
        DedupStateCache cache = new DedupStateCache(1 << 20, true);
        DedupStateCache.Entry entry = cache.entry("k");
        Bound state = bound(cache, entry);
        assertThat(state.value()).isNull();
        FilterMeta m = meta(6400); // limit min(64, 6400 / 64) = 64
        assertThat(SqlDedupLayout.deferLimit(m)).isEqualTo(64);
        state.update(m); // a new key: structural, written at once, under the deferred key
        assertThat(stored(SqlDedupLayout.DEFERRED_META_KEY)).isZero();
        assertThat(view.contains(SqlDedupLayout.META_KEY)).isFalse();
        for (int i = 1; i <= 63; i++) {
            m.slots.get(0).get(0).itemsAdded++;
            state.updateCounts(m);
        }
        assertThat(stored(SqlDedupLayout.DEFERRED_META_KEY)).as("63 changes lag").isZero();
        m.slots.get(0).get(0).itemsAdded++;
        state.updateCounts(m);
        assertThat(stored(SqlDedupLayout.DEFERRED_META_KEY)).as("the 64th writes").isEqualTo(64);
        for (int i = 0; i < 10; i++) {
            m.slots.get(0).get(0).itemsAdded++;
            state.updateCounts(m);
        }
        // A restored task (a new cache) reads 64 and adds the limit less one: 127 >= 74.
        DedupStateCache restored = new DedupStateCache(1 << 20, true);
        FilterMeta read = bound(restored, restored.entry("k")).value();
        assertThat(items(read)).isEqualTo(64 + 63).isGreaterThanOrEqualTo(74);
    }

    @Test
    void aReadNeverCountsFewerItemsThanWereAddedNorMoreThanTheLimitAbove() throws Exception {
        Random random = new Random(21);
        for (int trial = 0; trial < 200; trial++) {
            view.clear();
            long capacity = 64 + random.nextInt(10_000);
            DedupStateCache cache = new DedupStateCache(1 << 20, true);
            Bound state = bound(cache, cache.entry("k"));
            state.value();
            FilterMeta m = meta(capacity);
            int limit = SqlDedupLayout.deferLimit(m);
            state.update(m);
            long added = 0;
            int steps = random.nextInt(500);
            for (int i = 0; i < steps; i++) {
                m.slots.get(0).get(0).itemsAdded++;
                added++;
                if (random.nextInt(50) == 0) {
                    state.update(m); // a new page: written at once
                } else {
                    state.updateCounts(m);
                }
            }
            DedupStateCache restored = new DedupStateCache(1 << 20, true);
            long read = items(bound(restored, restored.entry("k")).value());
            assertThat(read)
                    .as("trial %d: capacity %d, %d added", trial, capacity, added)
                    .isBetween(added, added + limit - 1);
        }
    }

    @Test
    void onceTheCacheDropsAKeyWritesAreExactAndTheDeferredEntryGoes() throws Exception {
        DedupStateCache cache = new DedupStateCache(1 << 20, true);
        DedupStateCache.Entry entry = cache.entry("k");
        Bound state = bound(cache, entry);
        state.value();
        FilterMeta m = meta(6400);
        state.update(m);
        m.slots.get(0).get(0).itemsAdded += 5;
        state.updateCounts(m); // lags: 0 stored
        assertThat(stored(SqlDedupLayout.DEFERRED_META_KEY)).isZero();
        cache.clear(); // a timer, or an eviction: from now on every write is exact
        assertThat(cache.defers()).isFalse();
        DedupStateCache.Entry again = cache.entry("k");
        Bound state2 = bound(cache, again);
        FilterMeta read = state2.value(); // read back with the lag counted
        assertThat(items(read)).isEqualTo(63);
        read.slots.get(0).get(0).itemsAdded++;
        state2.updateCounts(read);
        assertThat(stored(SqlDedupLayout.META_KEY)).as("exact, at once").isEqualTo(64);
        assertThat(view.contains(SqlDedupLayout.DEFERRED_META_KEY)).isFalse();
        // and read back exactly, with no lag added
        DedupStateCache restored = new DedupStateCache(1 << 20, true);
        assertThat(items(bound(restored, restored.entry("k")).value())).isEqualTo(64);
    }

    @Test
    void layout2MetadataIsReadExactlyAndMovesToTheDeferredKeyAtItsNextWrite() throws Exception {
        FilterMeta m = meta(6400);
        m.slots.get(0).get(0).itemsAdded = 100;
        org.apache.flink.core.memory.DataOutputSerializer out =
                new org.apache.flink.core.memory.DataOutputSerializer(256);
        FilterMetaSerializer.INSTANCE.serialize(m, out);
        view.put(SqlDedupLayout.META_KEY, out.getCopyOfBuffer());
        DedupStateCache cache = new DedupStateCache(1 << 20, true);
        Bound state = bound(cache, cache.entry("k"));
        FilterMeta read = state.value();
        assertThat(items(read)).isEqualTo(100);
        state.update(read);
        assertThat(stored(SqlDedupLayout.DEFERRED_META_KEY)).isEqualTo(100);
        assertThat(view.contains(SqlDedupLayout.META_KEY)).isFalse();
    }

    @Test
    void withoutDeferralEveryWriteIsExactUnderTheLayout2Key() throws Exception {
        DedupStateCache cache = new DedupStateCache(1 << 20, false); // retention
        Bound state = bound(cache, cache.entry("k"));
        state.value();
        FilterMeta m = meta(6400);
        state.update(m);
        m.slots.get(0).get(0).itemsAdded++;
        state.updateCounts(m);
        assertThat(stored(SqlDedupLayout.META_KEY)).isEqualTo(1);
        assertThat(view.contains(SqlDedupLayout.DEFERRED_META_KEY)).isFalse();
    }
}
