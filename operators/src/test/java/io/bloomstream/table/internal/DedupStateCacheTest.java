package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.LocalDateTime;
import org.junit.jupiter.api.Test;

/** Tests for {@link DedupStateCache} and the page encoding of {@link SqlDedupLayout}. */
class DedupStateCacheTest {

    @Test
    void cachesOnlyKeysWhoseJavaEqualityIsFlinksKeyEquality() {
        assertThat(DedupStateCache.keyOf(new Object[] {"a"})).isEqualTo("a");
        assertThat(DedupStateCache.keyOf(new Object[] {7})).isEqualTo(7);
        assertThat(DedupStateCache.keyOf(new Object[] {null})).isNull();
        assertThat(DedupStateCache.keyOf(new Object[] {LocalDateTime.of(2026, 1, 1, 0, 0)}))
                .isEqualTo(LocalDateTime.of(2026, 1, 1, 0, 0));
        // BYTES by content, not identity
        assertThat(DedupStateCache.keyOf(new Object[] {new byte[] {1, 2}}))
                .isEqualTo(DedupStateCache.keyOf(new Object[] {new byte[] {1, 2}}));
        assertThat(DedupStateCache.keyOf(new Object[] {"a", 1L}))
                .isEqualTo(DedupStateCache.keyOf(new Object[] {"a", 1L}))
                .isNotEqualTo(DedupStateCache.keyOf(new Object[] {"a", 2L}));
        // floating point (NaN payloads, -0.0) and nested values are never cached
        assertThat(DedupStateCache.keyOf(new Object[] {1.0d})).isSameAs(DedupStateCache.UNCACHED);
        assertThat(DedupStateCache.keyOf(new Object[] {"a", 1.0f}))
                .isSameAs(DedupStateCache.UNCACHED);
        assertThat(new DedupStateCache(1 << 20).entry(DedupStateCache.UNCACHED)).isNull();
    }

    @Test
    void keepsEntriesPerKeyAndPagesAsStored() {
        DedupStateCache cache = new DedupStateCache(1 << 20);
        DedupStateCache.Entry a = cache.entry("a");
        assertThat(cache.entry("a")).isSameAs(a);
        assertThat(cache.entry("b")).isNotSameAs(a);
        cache.page(a, 5L, new long[] {1, 2});
        cache.page(a, 6L, null);
        assertThat(DedupStateCache.page(a, 5L)).containsExactly(1, 2);
        assertThat(DedupStateCache.page(a, 6L)).isSameAs(DedupStateCache.ABSENT);
        assertThat(DedupStateCache.page(a, 7L)).isNull();
        cache.dropPages(a);
        assertThat(DedupStateCache.page(a, 5L)).isNull();
        cache.clear();
        assertThat(cache.entry("a")).isNotSameAs(a);
        cache.clear();
        assertThat(cache.bytes()).isZero();
    }

    @Test
    void trimDropsLeastRecentlyUsedKeysButNeverTheCurrentOne() {
        // each entry: 256 bytes + one page of 64 words (64 + 512 bytes) = 832 bytes
        DedupStateCache cache = new DedupStateCache(2000);
        for (String k : new String[] {"a", "b", "c"}) {
            cache.page(cache.entry(k), 0L, new long[64]);
        }
        assertThat(cache.bytes()).isEqualTo(3 * 832);
        DedupStateCache.Entry a = cache.entry("a"); // now the most recently used
        cache.trim(a);
        assertThat(cache.bytes()).isEqualTo(2 * 832);
        assertThat(DedupStateCache.page(cache.entry("a"), 0L)).isNotNull(); // a kept
        assertThat(DedupStateCache.page(cache.entry("b"), 0L)).isNull(); // b dropped: new entry
        DedupStateCache tiny = new DedupStateCache(1);
        DedupStateCache.Entry only = tiny.entry("x");
        tiny.page(only, 0L, new long[64]);
        tiny.trim(only);
        assertThat(tiny.entry("x")).isSameAs(only);
    }

    @Test
    void pagesAreLittleEndianWords() throws IOException {
        byte[] b = SqlDedupLayout.encode(new long[] {1, 0x0102030405060708L});
        assertThat(b).containsExactly(1, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1);
        assertThat(SqlDedupLayout.decode(b)).containsExactly(1, 0x0102030405060708L);
        assertThatThrownBy(() -> SqlDedupLayout.decode(new byte[7]))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Possible corruption: a page of 7 bytes");
    }
}
