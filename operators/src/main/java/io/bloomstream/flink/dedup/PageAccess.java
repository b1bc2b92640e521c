package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import io.bloomstream.flink.state.KeyCache;
import io.bloomstream.flink.state.StateLayout;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;

/**
 * The pages of the current key's filter: read and written through the write-back cache when the
 * key's entry is cached and the stage is small enough for it, otherwise straight from and to the
 * {@code MapState} of pages (key: {@link StateLayout#pageKey}).
 */
@Internal
final class PageAccess {

    /** The write-back cache, or null. */
    private final KeyCache cache;

    private final MapState<Long, long[]> pages;
    private final long[] scratch = new long[Sizing.MAX_HASHES];

    PageAccess(KeyCache cache, MapState<Long, long[]> pages) {
        this.cache = cache;
        this.pages = pages;
    }

    /** Whether the pages of a stage of this shape go through the cache for {@code entry}. */
    static boolean cached(KeyCache.Entry entry, FilterSpec spec) {
        return entry != null && spec.pages() <= KeyCache.MAX_STAGE_PAGES;
    }

    /**
     * Page {@code page} of (slot, stage) of the current key, or null if absent. With the cache the
     * array is shared: never mutate it (see {@link #add}).
     *
     * @param entry the current key's cache entry, or null when it is not cached
     */
    long[] read(KeyCache.Entry entry, int slot, int stage, FilterSpec spec, long page)
            throws Exception {
        if (!cached(entry, spec)) {
            return pages.get(StateLayout.pageKey(slot, stage, page));
        }
        int n = (int) spec.pages();
        long[] words = cache.page(entry, slot, stage, n, (int) page);
        if (words == null) {
            words = pages.get(StateLayout.pageKey(slot, stage, page));
            cache.loaded(entry, slot, stage, n, (int) page, words);
        }
        return words == KeyCache.ABSENT ? null : words;
    }

    /** Whether a page as {@link #read} returned it might contain (h1, h2). */
    boolean mightContain(FilterSpec spec, long[] words, long h1, long h2) {
        return Pages.mightContain(spec, words, h1, h2, scratch);
    }

    /**
     * Adds (h1, h2) to a page ({@code read} is the page as {@link #read} returned it): with the
     * cache in an owned array that goes to state at the next flush, otherwise written at once.
     */
    void add(
            KeyCache.Entry entry,
            int slot,
            int stage,
            FilterSpec spec,
            long page,
            long[] read,
            long h1,
            long h2)
            throws Exception {
        if (!cached(entry, spec)) {
            long[] words = read == null ? new long[Pages.words(spec)] : read;
            Pages.add(spec, words, h1, h2, scratch);
            pages.put(StateLayout.pageKey(slot, stage, page), words);
            return;
        }
        long[] words =
                cache.writable(
                        entry, slot, stage, (int) spec.pages(), (int) page, Pages.words(spec));
        Pages.add(spec, words, h1, h2, scratch);
    }
}
