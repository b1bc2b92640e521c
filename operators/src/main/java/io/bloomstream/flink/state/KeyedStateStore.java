package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;

/**
 * The {@link FilterStore} of the DataStream operator: the current key's metadata in a {@code
 * ValueState} and its pages in a {@code MapState} (key: {@link StateLayout#pageKey}), read and
 * written through the write-back {@link KeyCache} when there is one (the key's entry is cached and
 * its stage small enough), otherwise read from and written to state on every event, with a private
 * copy of the most recently used keys' metadata ({@link #META_CACHE_KEYS}) so that a duplicate
 * costs one state read (its page) instead of two. Metadata handed to the state is always a copy,
 * and the cache never shares an object with the state backend, so heap snapshots taken
 * asynchronously never see the judge's changes. {@link #bind} names the current key, which must be
 * the backend's.
 *
 * <p>Exact mode: the key's exact entries are in {@link ExactEntries} (one keyed state, namespaced
 * by generation slot), outside the write-back cache (on RocksDB new ones wait in the exact entries'
 * own write-behind buffer, written by {@link #flush}); {@link #bindExact} names the current event's
 * id. They are dropped with their slots and with the key, also when exact mode was switched off at
 * a restore (the operator then still opens them, see {@code StateShape}).
 */
@Internal
public final class KeyedStateStore implements FilterStore {

    /** Keys whose metadata is kept without the write-back cache. */
    public static final int META_CACHE_KEYS = 4096;

    private final ValueState<FilterMeta> metaState;
    private final MapState<Long, long[]> pages;

    /** The exact entries, or null when the state holds none. */
    private final ExactEntries exact;

    /** The write-back cache, or null. */
    private final KeyCache cache;

    private final int metaCacheKeys;

    private final Map<Object, FilterMeta> metaCache =
            new LinkedHashMap<>(256, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<Object, FilterMeta> e) {
                    return size() > metaCacheKeys;
                }
            };

    private Object key;

    /** The current key's cache entry (with {@link #cache}), or null until its metadata is read. */
    private KeyCache.Entry entry;

    /** The current key's metadata as last read, or null: which slots {@link #clear} drops. */
    private FilterMeta lastRead;

    /**
     * @param cache the write-back cache over the same states, or null
     * @param metaCacheKeys without the cache, how many keys' metadata to keep (0: none)
     * @param exact the exact entries (exact mode, or state written in exact mode), or null
     */
    public KeyedStateStore(
            ValueState<FilterMeta> metaState,
            MapState<Long, long[]> pages,
            KeyCache cache,
            int metaCacheKeys,
            ExactEntries exact) {
        this.metaState = metaState;
        this.pages = pages;
        this.cache = cache;
        this.metaCacheKeys = metaCacheKeys;
        this.exact = exact;
    }

    /** Binds the store to the current key (the backend's current key). */
    public KeyedStateStore bind(Object key) {
        this.key = key;
        this.entry = null;
        this.lastRead = null;
        return this;
    }

    /** Binds the current event's exact key (exact mode), after {@link #bind}. */
    public KeyedStateStore bindExact(String exactKey) {
        exact.bind(exactKey);
        return this;
    }

    /** The write-back cache, or null. */
    public KeyCache cache() {
        return cache;
    }

    /**
     * Writes the cache's changes and the buffered exact entries to state (before a checkpoint
     * barrier); a no-op without either.
     */
    public void flush() throws Exception {
        if (cache != null) {
            cache.flush();
        }
        if (exact != null) {
            exact.flush();
        }
    }

    /** Past the cache's budget, writes back and drops the least recently used other keys. */
    public void trim() throws Exception {
        if (cache != null) {
            cache.trim(key);
        }
    }

    /**
     * Writes the current key's cached changes to state and drops its entry, so that what follows
     * works on state (a timer's expiry); a no-op without the cache.
     */
    public void uncache() throws Exception {
        if (cache != null) {
            cache.writeBackAndDrop(key);
            entry = null;
        }
    }

    @Override
    public FilterMeta readMeta() throws Exception {
        lastRead = meta();
        return lastRead;
    }

    private FilterMeta meta() throws Exception {
        if (cache != null) {
            entry = cache.get(key);
            if (entry == null) {
                entry = cache.put(key, load());
            }
            return entry.meta;
        }
        if (metaCacheKeys == 0) {
            return load();
        }
        FilterMeta meta = metaCache.get(key);
        if (meta == null) {
            meta = load();
            if (meta != null) {
                metaCache.put(key, meta);
            }
        }
        return meta;
    }

    private FilterMeta load() throws Exception {
        FilterMeta stored = metaState.value();
        return stored == null ? null : stored.copy();
    }

    @Override
    public void writeMeta(FilterMeta meta, boolean countsOnly) throws Exception {
        lastRead = meta;
        if (entry != null) {
            entry.meta = meta;
            cache.metaChanged(entry, countsOnly);
            return;
        }
        if (metaCacheKeys > 0) {
            metaCache.put(key, meta);
        }
        metaState.update(meta.copy());
    }

    /** Whether the pages of a stage of this shape go through the cache. */
    private boolean cached(FilterSpec spec) {
        return entry != null && spec.pages() <= KeyCache.MAX_STAGE_PAGES;
    }

    @Override
    public long[] readPage(int slot, int stage, FilterSpec spec, long page) throws Exception {
        if (!cached(spec)) {
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

    /**
     * Without the cache the array read from state is the caller's (a heap state's value is
     * replaced, never changed, by the put that follows: {@code MapState} puts copy-on-write); with
     * it, the cache's owned array.
     */
    @Override
    public long[] pageToWrite(int slot, int stage, FilterSpec spec, long page, long[] read) {
        if (!cached(spec)) {
            return read == null ? new long[Pages.words(spec)] : read;
        }
        return cache.writable(
                entry, slot, stage, (int) spec.pages(), (int) page, Pages.words(spec));
    }

    @Override
    public void pageWritten(int slot, int stage, FilterSpec spec, long page, long[] words)
            throws Exception {
        if (!cached(spec)) {
            pages.put(StateLayout.pageKey(slot, stage, page), words);
        }
    }

    @Override
    public boolean exactContains(int slot) throws Exception {
        return exact.contains(slot);
    }

    @Override
    public void exactAdd(int slot) throws Exception {
        exact.add(slot);
    }

    @Override
    public void dropSlots(long slots) throws Exception {
        uncache();
        Iterator<Long> keys = pages.keys().iterator();
        while (keys.hasNext()) {
            if ((slots & (1L << StateLayout.slotOf(keys.next()))) != 0) {
                keys.remove();
            }
        }
        if (exact != null) {
            exact.drop(slots);
        }
    }

    @Override
    public void clear() throws Exception {
        if (exact != null) {
            FilterMeta meta = lastRead != null ? lastRead : load();
            if (meta != null) {
                int n = meta.generations();
                exact.drop(n >= Long.SIZE ? -1L : (1L << n) - 1);
            }
        }
        lastRead = null;
        metaState.clear();
        pages.clear();
        metaCache.remove(key);
        if (cache != null) {
            cache.forget(key);
        }
        entry = null;
    }

    @Override
    public Iterable<Long> pageKeys() throws Exception {
        return pages.keys();
    }

    /**
     * The cached page that the newest stage of {@code key}'s most recent generation would probe for
     * an id with hash {@code h1}, or null when the key or page is not cached: a bundle collects
     * these, then reads them in a tight loop so that their misses overlap. The stage is remembered
     * in the key's cache entry ({@link KeyCache#newestPages}), so this reads no metadata.
     */
    public long[] pageToTouch(Object key, long h1, FilterJudge judge) {
        if (cache == null) {
            return null;
        }
        KeyCache.Entry e = cache.get(key);
        if (e == null) {
            return null;
        }
        KeyCache.StagePages sp = cache.newestPages(e, judge);
        return sp == null ? null : KeyCache.touchable(sp, (int) e.newestSpec.page(h1));
    }
}
