package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.state.FilterJudge;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.api.dataview.MapView;
import org.junit.jupiter.api.Test;

/**
 * The hash strategy of {@code BLOOM_DEDUP}'s state ({@link SqlDedupState}): keys new to the state
 * are hashed with XXH3-64; a key whose state records XXH3-128 (an earlier release) keeps it, and
 * remembers every id it was given, in the same task as new keys on XXH3-64.
 */
class SqlDedupHashTest {

    private static final int IDS = 2000;

    /** One partition key's state: the function's metadata and pages views. */
    private static final class Key {
        final MapView<Integer, byte[]> meta = new MapView<>();
        final MapView<Long, byte[]> pages = new MapView<>();

        int strategy() throws Exception {
            byte[] b = meta.get(SqlDedupLayout.DEFERRED_META_KEY);
            if (b == null) {
                b = meta.get(SqlDedupLayout.META_KEY);
            }
            return FilterMetaSerializer.INSTANCE.deserialize(new DataInputDeserializer(b))
                    .strategyId;
        }
    }

    /** A task: a state object and views over whichever key a row belongs to. */
    private static final class Task {
        final SqlDedupState state = new SqlDedupState(new UnregisteredMetricsGroup());
        final DedupStateCache cache;
        final SqlDedupStore store;

        Task(DedupConfig config) {
            state.configure(config, 1000);
            cache = DedupStateCache.forConfig(state.config());
            store = new SqlDedupStore(cache);
        }

        /** Whether the id passes, as the function judges a row of {@code key}. */
        boolean add(Key key, String id) throws Exception {
            DedupStateCache.Entry entry = cache.entry(key);
            store.bind(key.meta, key.pages, entry);
            try {
                FilterJudge.IdHash hash =
                        (hasher, out) -> {
                            if (hasher.is64Bit()) {
                                out[0] = out[1] = hasher.hash64(id);
                            } else {
                                var h = hasher.hash(id);
                                out[0] = h.h1();
                                out[1] = h.h2();
                            }
                        };
                return state.addIfAbsent(store, key, hash, 0, 0);
            } finally {
                cache.trim(entry);
            }
        }

        int passed(Key key, int from, int to) throws Exception {
            int n = 0;
            for (int i = from; i < to; i++) {
                n += add(key, "id-" + i) ? 1 : 0;
            }
            return n;
        }
    }

    private static DedupConfig config() {
        return DedupConfig.builder().expectedItems(1000).fpp(0.01).build();
    }

    @Test
    void newKeysAreHashedWithXxh3_64AndOldKeysKeepXxh3_128() throws Exception {
        Key old = new Key();
        Task earlier =
                new Task(
                        DedupConfig.builder()
                                .expectedItems(1000)
                                .fpp(0.01)
                                .hashStrategy(HashStrategy.XXH3_128)
                                .build());
        // 2000 ids past 1000 expected: a second stage; the rate stays <= 1% (Poisson bound).
        assertThat(earlier.passed(old, 0, IDS)).isGreaterThanOrEqualTo(IDS - 40);
        assertThat(old.strategy()).isEqualTo(HashStrategy.XXH3_128.id());

        // A restored task (new objects, same state) with the default config.
        Task restored = new Task(config());
        assertThat(restored.state.config().hasher().strategy()).isEqualTo(HashStrategy.XXH3_64);
        assertThat(restored.passed(old, 0, IDS)).as("every id of the old key remembered").isZero();
        Key fresh = new Key();
        int passed = restored.passed(fresh, 0, IDS);
        assertThat(passed).isGreaterThanOrEqualTo(IDS - 40);
        assertThat(fresh.strategy()).isEqualTo(HashStrategy.XXH3_64.id());
        assertThat(restored.passed(fresh, 0, IDS)).as("the new key remembers its ids").isZero();
        // New ids of the old key still go into its XXH3_128 filter, and are remembered.
        int more = restored.passed(old, IDS, IDS + 500);
        assertThat(more).isGreaterThanOrEqualTo(500 - 20);
        assertThat(restored.passed(old, 0, IDS + 500)).isZero();
        assertThat(old.strategy()).isEqualTo(HashStrategy.XXH3_128.id());
    }

    @Test
    void theNewKeysHashIsTheXxh3_64OfTheStringsCodeUnits() throws Exception {
        // Written under XXH3_64: the id's page is the one XXH3_64 of its UTF-16 units names.
        Task task = new Task(config());
        Key key = new Key();
        assertThat(task.add(key, "only")).isTrue();
        FilterMeta m =
                FilterMetaSerializer.INSTANCE.deserialize(
                        new DataInputDeserializer(key.meta.get(SqlDedupLayout.DEFERRED_META_KEY)));
        var spec = m.slots.get(0).get(0).spec(Hasher.xxh3_64(Hasher.DEFAULT_SEED));
        long page = spec.page(Hasher.xxh3_64(Hasher.DEFAULT_SEED).hash64("only"));
        assertThat(key.pages.keys())
                .containsExactly(io.bloomstream.flink.state.StateLayout.pageKey(0, 0, page));
    }

    @Test
    void aKeyedStrategyInStateIsRefusedNamingIt() throws Exception {
        Key key = new Key();
        FilterMeta m = FilterMeta.forDedup(Hasher.sipHash24(1, 2), FilterMeta.DOMAIN_NONE, 0, 0);
        var out = new org.apache.flink.core.memory.DataOutputSerializer(64);
        FilterMetaSerializer.INSTANCE.serialize(m, out);
        key.meta.put(SqlDedupLayout.META_KEY, out.getCopyOfBuffer());
        Task task = new Task(config());
        assertThatThrownBy(() -> task.add(key, "x"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SIPHASH_2_4");
    }
}
