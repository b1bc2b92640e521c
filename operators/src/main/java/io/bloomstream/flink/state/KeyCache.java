package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.operators.KeyContext;

/**
 * A write-back cache of keys' filter state (metadata and pages) in the operator, in front of
 * Flink's keyed state: an event on a cached key reads and writes plain arrays, with no
 * state-backend call, no boxed map key and no serialization. Changes reach the state backend when
 * the operator flushes (before every checkpoint barrier: {@code prepareSnapshotPreBarrier}), when a
 * key is evicted, and before a timer touches the key's state, so every snapshot and savepoint holds
 * exactly what a write-through operator would have written: the same canonical layout, restorable
 * on any backend.
 *
 * <p>Sharing rule (what makes it safe on the heap backend, whose snapshots are asynchronous and
 * share objects with the live state): an array that has been handed to the state backend or read
 * from it is <em>shared</em> and never mutated; {@link #writable} copies it first. Only arrays this
 * cache allocated or copied since they last went to the backend (<em>owned</em>) are mutated in
 * place, so each page is copied at most once per checkpoint interval. (On the heap backend a clean
 * cached page starts out as the state's own array; after a snapshot the backend's copy-on-write
 * gives the live state its own copies, so the budget is extra heap on either backend.)
 *
 * <p>The cache holds at most {@code maxBytes} of pages (counted as 16 + 8 x words bytes each, plus
 * the page tables); past it, keys not used recently are written back and dropped (the CLOCK
 * approximation of least recently used). Writing back a key other than the current one switches the
 * backend's current key through Flink's {@link KeyContext} (the operator) and switches it back.
 */
@Internal
public final class KeyCache {

    /** Switches the keyed state backend's current key (the operator's {@code setCurrentKey}). */

    /** A page the state does not hold (the key has no such page). */
    public static final long[] ABSENT = new long[0];

    /**
     * Stages with more pages are not cached (their page table alone would take 8 MiB); their pages
     * are read and written in state on every event.
     */
    public static final long MAX_STAGE_PAGES = 1 << 20;

    private static final long ENTRY_BYTES = 96;

    /** One key's cached state. */
    public static final class Entry {
        final Object key;

        /** The key's metadata, owned by the cache (state holds copies); null: no state yet. */
        public FilterMeta meta;

        boolean metaDirty;

        /** The key had no state when it was cached: a page not in a table is absent. */
        final boolean fresh;

        private final List<StagePages> stages = new ArrayList<>(2);
        private boolean dirty;

        /** Used since the eviction scan last passed it (the CLOCK algorithm's reference bit). */
        private boolean referenced;

        private long bytes = ENTRY_BYTES;

        /**
         * The pages of the stage a new id of this key goes to (its newest slot's newest stage),
         * with that stage's spec; null until asked for ({@link KeyedStateStore#pageToTouch}) and
         * after every change of the key's shape (a stage, a generation or a page added, state
         * dropped): what a bundle's prefetch reads instead of walking the metadata.
         */
        StagePages newest;

        FilterSpec newestSpec;

        Entry(Object key, FilterMeta meta, boolean fresh) {
            this.key = key;
            this.meta = meta;
            this.fresh = fresh;
        }
    }

    /** The cached pages of one (slot, stage) of a key. */
    static final class StagePages {
        final int slot;
        final int stage;
        final long[][] pages;
        final long[] owned;

        StagePages(int slot, int stage, int pages) {
            this.slot = slot;
            this.stage = stage;
            this.pages = new long[pages][];
            this.owned = new long[(pages + 63) >>> 6];
        }

        boolean isOwned(int page) {
            return (owned[page >>> 6] & (1L << page)) != 0;
        }
    }

    private final long maxBytes;
    private final KeyContext keys;
    private final ValueState<FilterMeta> metaState;
    private final MapState<Long, long[]> pageState;
    // Insertion order; eviction gives used entries a second chance (CLOCK), so a hit costs a field
    // write instead of relinking an access-ordered map.
    private final LinkedHashMap<Object, Entry> entries = new LinkedHashMap<>(1024);

    /**
     * The entries of small non-negative {@code Integer} keys (global mode's shards), found by index
     * without hashing or boxing: the same entries as in {@link #entries}, which keeps their order.
     */
    private Entry[] indexed = new Entry[0];

    private final List<Entry> dirty = new ArrayList<>();
    private long bytes;
    private long flushes;

    public KeyCache(
            long maxBytes,
            KeyContext keys,
            ValueState<FilterMeta> metaState,
            MapState<Long, long[]> pageState) {
        this.maxBytes = maxBytes;
        this.keys = keys;
        this.metaState = metaState;
        this.pageState = pageState;
    }

    /** Integer keys below this are found by index ({@link #indexed}); the most shards. */
    static final int MAX_INDEXED = 1 << 20;

    /** The cached entry of {@code key}, or null. */
    public Entry get(Object key) {
        Entry e;
        int i = indexOf(key);
        if (i >= 0) {
            e = i < indexed.length ? indexed[i] : null;
        } else {
            e = entries.get(key);
        }
        if (e != null) {
            e.referenced = true;
        }
        return e;
    }

    /** Caches a key read from state (or found to have none: {@code meta} null). */
    public Entry put(Object key, FilterMeta meta) {
        Entry e = new Entry(key, meta, meta == null);
        entries.put(key, e);
        int i = indexOf(key);
        if (i >= 0) {
            if (i >= indexed.length) {
                indexed =
                        java.util.Arrays.copyOf(
                                indexed,
                                Math.min(MAX_INDEXED, Math.max(i + 1, 2 * indexed.length)));
            }
            indexed[i] = e;
        }
        bytes += e.bytes;
        return e;
    }

    /** The index of a small non-negative Integer key, or -1 for any other key. */
    private static int indexOf(Object key) {
        if (key instanceof Integer) {
            int i = (Integer) key;
            if (i >= 0 && i < MAX_INDEXED) {
                return i;
            }
        }
        return -1;
    }

    private Entry removeEntry(Object key) {
        Entry e = entries.remove(key);
        unindex(key);
        return e;
    }

    private void unindex(Object key) {
        int i = indexOf(key);
        if (i >= 0 && i < indexed.length) {
            indexed[i] = null;
        }
    }

    /**
     * Notes that the entry's metadata changed: only item counts ({@code countsOnly}), or also its
     * shape (which forgets the entry's {@link Entry#newest} stage).
     */
    public void metaChanged(Entry e, boolean countsOnly) {
        e.metaDirty = true;
        if (!countsOnly) {
            e.newest = null;
        }
        markDirty(e);
    }

    /**
     * The page {@code page} of the stage {@link #newestPages} found, or null when the cache does
     * not hold it as an array (absent or not read yet): for the prefetch only.
     */
    static long[] touchable(StagePages sp, int page) {
        long[] words = sp.pages[page];
        return words == ABSENT ? null : words;
    }

    /**
     * The pages and spec of the entry's newest stage (the newest slot's newest stage, where a new
     * id goes), remembered in the entry until its shape changes; null when the key has no stage or
     * the stage has more than {@link #MAX_STAGE_PAGES} pages.
     */
    StagePages newestPages(Entry e, FilterJudge judge) {
        StagePages sp = e.newest;
        if (sp != null || e.meta == null) {
            return sp;
        }
        FilterMeta meta = e.meta;
        int slot = FilterJudge.newestSlot(meta);
        if (slot < 0) {
            return null;
        }
        List<FilterMeta.Stage> stages = meta.slots.get(slot);
        int i = stages.size() - 1;
        FilterSpec spec = stages.get(i).spec(judge.hasherOf(meta));
        if (spec.pages() > MAX_STAGE_PAGES) {
            return null;
        }
        e.newest = stagePages(e, slot, i, (int) spec.pages());
        e.newestSpec = spec;
        return e.newest;
    }

    /**
     * The page {@code page} of (slot, stage) as the cache holds it: an array (do not mutate it; see
     * {@link #writable}), {@link #ABSENT}, or null when the cache does not know it (read it from
     * state and {@link #loaded} it).
     */
    public long[] page(Entry e, int slot, int stage, int pages, int page) {
        StagePages sp = stagePages(e, slot, stage, pages);
        long[] words = sp.pages[page];
        if (words == null && e.fresh) {
            return ABSENT;
        }
        return words;
    }

    /** Records a page read from state ({@code words} null: absent), which the cache shares. */
    public void loaded(Entry e, int slot, int stage, int pages, int page, long[] words) {
        StagePages sp = stagePages(e, slot, stage, pages);
        sp.pages[page] = words == null ? ABSENT : words;
        if (words != null) {
            grow(e, 16L + 8L * words.length);
        }
    }

    /**
     * An array of the page that the caller may mutate: the owned array, a copy of a shared one, or
     * a new zeroed array of {@code words} words for an absent page. The page is then dirty.
     */
    public long[] writable(Entry e, int slot, int stage, int pages, int page, int words) {
        StagePages sp = stagePages(e, slot, stage, pages);
        if (sp.isOwned(page)) {
            return sp.pages[page];
        }
        long[] current = sp.pages[page];
        long[] mine;
        if (current == null || current == ABSENT) {
            mine = new long[words];
            grow(e, 16L + 8L * words);
        } else {
            mine = current.clone();
        }
        sp.pages[page] = mine;
        sp.owned[page >>> 6] |= 1L << page;
        markDirty(e);
        return mine;
    }

    private StagePages stagePages(Entry e, int slot, int stage, int pages) {
        StagePages newest = e.newest;
        if (newest != null && newest.slot == slot && newest.stage == stage) {
            return newest;
        }
        List<StagePages> stages = e.stages;
        for (int i = 0, n = stages.size(); i < n; i++) {
            StagePages sp = stages.get(i);
            if (sp.slot == slot && sp.stage == stage) {
                return sp;
            }
        }
        StagePages sp = new StagePages(slot, stage, pages);
        e.stages.add(sp);
        grow(e, 32L + 8L * pages + 8L * sp.owned.length);
        return sp;
    }

    private void grow(Entry e, long n) {
        e.bytes += n;
        bytes += n;
    }

    private void markDirty(Entry e) {
        if (!e.dirty) {
            e.dirty = true;
            dirty.add(e);
        }
    }

    /**
     * Writes the entry's changes to state and forgets it, so that the caller can work on the key's
     * state directly; the key must be the backend's current key.
     */
    public void writeBackAndDrop(Object key) throws Exception {
        Entry e = removeEntry(key);
        if (e != null) {
            bytes -= e.bytes;
            if (e.dirty) {
                writeBack(e);
            }
        }
    }

    /** Forgets a key whose state the caller cleared, without writing anything. */
    public void forget(Object key) {
        Entry e = removeEntry(key);
        if (e != null) {
            bytes -= e.bytes;
            e.dirty = false; // left in the dirty list; flush skips it
        }
    }

    /** Evicts keys not used recently (never {@code keep}) while over the budget. */
    public void trim(Object keep) throws Exception {
        if (bytes <= maxBytes) {
            return;
        }
        Object current = keys.getCurrentKey();
        boolean switched = false;
        List<Entry> secondChance = new ArrayList<>();
        Iterator<Entry> it = entries.values().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            Entry e = it.next();
            if (e.key.equals(keep)) {
                continue;
            }
            it.remove();
            if (e.referenced) {
                e.referenced = false;
                secondChance.add(e); // back at the tail, below (still indexed)
                continue;
            }
            unindex(e.key);
            bytes -= e.bytes;
            if (e.dirty) {
                keys.setCurrentKey(e.key);
                switched = true;
                writeBack(e); // stays in the dirty list, clean; flush skips it
            }
        }
        for (Entry e : secondChance) {
            entries.put(e.key, e);
        }
        if (switched) {
            keys.setCurrentKey(current);
        }
        if (bytes > maxBytes && !secondChance.isEmpty()) {
            trim(keep); // the used entries had their second chance: this pass evicts them
        }
        if (dirty.size() > 2 * entries.size() + 1024) {
            dirty.removeIf(e -> !e.dirty);
        }
    }

    /** Writes every change to state; called before each checkpoint barrier and at the end. */
    public void flush() throws Exception {
        if (dirty.isEmpty()) {
            return;
        }
        flushes++;
        Object current = keys.getCurrentKey();
        for (Entry e : dirty) {
            if (e.dirty) {
                keys.setCurrentKey(e.key);
                writeBack(e);
            }
        }
        dirty.clear();
        if (current != null) {
            keys.setCurrentKey(current);
        }
    }

    /** Writes an entry's changes under the backend's current key (which must be the entry's). */
    private void writeBack(Entry e) throws Exception {
        if (e.metaDirty) {
            if (e.meta == null) {
                metaState.clear();
            } else {
                metaState.update(e.meta.copy());
            }
            e.metaDirty = false;
        }
        for (StagePages sp : e.stages) {
            for (int w = 0; w < sp.owned.length; w++) {
                long bits = sp.owned[w];
                while (bits != 0) {
                    int page = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    pageState.put(StateLayout.pageKey(sp.slot, sp.stage, page), sp.pages[page]);
                }
                sp.owned[w] = 0; // the state now shares them
            }
        }
        e.dirty = false;
    }

    /** Bytes the cache counts against its budget. */
    public long bytes() {
        return bytes;
    }

    /** Cached keys. */
    public int size() {
        return entries.size();
    }

    /** Flushes that wrote something. */
    long flushes() {
        return flushes;
    }
}
