package io.bloomstream.table.internal;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.FilterStore;
import io.bloomstream.flink.state.StateLayout;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.util.Iterator;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.api.dataview.MapView;

/**
 * The {@link FilterStore} of {@code BLOOM_DEDUP}: a partition key's metadata and pages in the
 * function's {@code MapView}s, in the {@link SqlDedupLayout SQL dedup layout}, read through the
 * task's {@link DedupStateCache} and written through to state in the same call (the function has no
 * hook before a checkpoint barrier), except a change of item counts alone while the cache {@link
 * DedupStateCache#defers() defers}: the metadata is then written every {@link
 * SqlDedupLayout#deferLimit} such changes, under {@link SqlDedupLayout#DEFERRED_META_KEY}, and a
 * read from state counts the lag as items.
 *
 * <p>Objects: the metadata read is the cache's (or, for a key not cached, a fresh copy), which the
 * judge changes in place; a {@code MapView} holds bytes only, so no state backend ever sees it. A
 * page read is the cache's array, which {@link #pageToWrite} hands to the judge to change and
 * {@link #pageWritten} writes to state before the call returns (if that fails, the task fails and
 * the cache goes with it).
 *
 * <p>Under a retention each key records the retention and generations it was written with ({@link
 * SqlDedupLayout#TIMER_CONFIG_KEY}), once per key and retention: a timer that fires after a
 * restore, before any row reached the task, frees state under it.
 *
 * <p>Exact mode: the exact entries are in {@value SqlDedupLayout#EXACT_STATE}, one per id and
 * generation slot ({@link SqlDedupLayout#exactEntry}), read and written straight through to state
 * (never cached: the judge reads them only on a filter's "maybe", and an add is a write without a
 * read). A {@code MapView} has no namespaces, so dropping a generation iterates the key's exact
 * entries and removes those of its slots (on a timer, never on a row's path); {@link #clear} clears
 * the view at once.
 */
@Internal
public final class SqlDedupStore implements FilterStore {

    private final DataOutputSerializer out = new DataOutputSerializer(256);
    private final DataInputDeserializer in = new DataInputDeserializer();

    /** The task's cache, or null (every read from state, every write immediate). */
    private final DedupStateCache cache;

    private MapView<Integer, byte[]> metaView;
    private MapView<Long, byte[]> pagesView;

    /** The current key's exact entries, or null (not in exact mode). */
    private MapView<String, Boolean> exactView;

    /** The call's views, whose older layouts' entries a key is moved from, or null. */
    private SqlDedupViews views;

    /** The current row's exact key ({@code ExactKeys}), or null. */
    private String exactKey;

    /** The current key's cache entry, or null. */
    private DedupStateCache.Entry entry;

    /** Where the current key's metadata is stored, when not cached (see DedupStateCache.Entry). */
    private int storedAt;

    /** Whether the current key records the timer config, when not cached. */
    private boolean timerConfigRecorded;

    /** The timer config this task records for each key (null: none, no retention). */
    private byte[] timerConfig;

    /**
     * @param cache the task's cache, or null
     */
    public SqlDedupStore(DedupStateCache cache) {
        this.cache = cache;
    }

    /**
     * Records {@code retention} and {@code generations} with each key written (a retention of 0:
     * nothing).
     */
    public void recordTimerConfig(long retentionMillis, int generations) {
        timerConfig =
                retentionMillis > 0
                        ? SqlDedupLayout.encodeTimerConfig(retentionMillis, generations)
                        : null;
    }

    /**
     * Binds the store to the current key's views.
     *
     * @param entry the key's cache entry, or null to read state on every access
     */
    public SqlDedupStore bind(
            MapView<Integer, byte[]> metaView,
            MapView<Long, byte[]> pagesView,
            DedupStateCache.Entry entry) {
        return bind(metaView, pagesView, null, entry);
    }

    /**
     * Binds the store to the current key's entries of the current layout in {@code views}, the
     * state of older layouts moved there when the key's metadata is first read from state.
     *
     * @param entry the key's cache entry, or null to read state on every access
     */
    public SqlDedupStore bind(SqlDedupViews views, DedupStateCache.Entry entry) {
        bind(views.meta, views.pages, views.exact, entry);
        this.views = views;
        return this;
    }

    /**
     * Binds the store to the current key's views, its exact entries too.
     *
     * @param exactView the key's exact entries, or null when the store keeps none
     * @param entry the key's cache entry, or null to read state on every access
     */
    public SqlDedupStore bind(
            MapView<Integer, byte[]> metaView,
            MapView<Long, byte[]> pagesView,
            MapView<String, Boolean> exactView,
            DedupStateCache.Entry entry) {
        this.metaView = metaView;
        this.pagesView = pagesView;
        this.exactView = exactView;
        this.views = null;
        this.exactKey = null;
        this.entry = entry;
        this.storedAt = DedupStateCache.UNKNOWN;
        this.timerConfigRecorded = false;
        return this;
    }

    @Override
    public FilterMeta readMeta() throws Exception {
        if (entry != null && entry.metaLoaded) {
            return entry.meta;
        }
        byte[] bytes = metaView.get(SqlDedupLayout.DEFERRED_META_KEY);
        boolean deferred = bytes != null;
        if (!deferred) {
            bytes = metaView.get(SqlDedupLayout.META_KEY);
        }
        if (bytes == null && views != null && views.moveFromLayout5()) {
            return readMeta(); // the key's state of an older layout, now in the current entries
        }
        FilterMeta meta = null;
        if (bytes != null) {
            in.setBuffer(bytes);
            meta = FilterMetaSerializer.INSTANCE.deserialize(in);
            if (deferred) {
                SqlDedupLayout.countDeferredItems(meta);
            }
        }
        int at =
                deferred
                        ? SqlDedupLayout.DEFERRED_META_KEY
                        : bytes != null ? SqlDedupLayout.META_KEY : DedupStateCache.NONE;
        boolean configRecorded =
                timerConfig == null
                        || java.util.Arrays.equals(
                                timerConfig, metaView.get(SqlDedupLayout.TIMER_CONFIG_KEY));
        stored(meta, at, configRecorded);
        return meta;
    }

    /**
     * Records what the state now holds for the current key: its metadata, where it is stored, and
     * whether the timer config is recorded (in the cache entry, or in this store without one).
     */
    private void stored(FilterMeta meta, int at, boolean configRecorded) {
        if (entry != null) {
            entry.meta = meta;
            entry.metaLoaded = true;
            entry.storedAt = at;
            entry.unwritten = 0;
            entry.timerConfigRecorded = configRecorded;
        } else {
            storedAt = at;
            timerConfigRecorded = configRecorded;
        }
    }

    @Override
    public void writeMeta(FilterMeta meta, boolean countsOnly) throws Exception {
        boolean defers = entry != null && cache.defers();
        if (countsOnly && defers) {
            entry.meta = meta;
            if (++entry.unwritten < SqlDedupLayout.deferLimit(meta)) {
                return;
            }
        }
        int at = defers ? SqlDedupLayout.DEFERRED_META_KEY : SqlDedupLayout.META_KEY;
        out.clear();
        FilterMetaSerializer.INSTANCE.serialize(meta, out);
        metaView.put(at, out.getCopyOfBuffer());
        int was = entry != null ? entry.storedAt : storedAt;
        if (was != DedupStateCache.NONE && was != at) {
            // the other entry is older: never read it again (UNKNOWN: remove it anyway)
            metaView.remove(
                    at == SqlDedupLayout.META_KEY
                            ? SqlDedupLayout.DEFERRED_META_KEY
                            : SqlDedupLayout.META_KEY);
        }
        if (timerConfig != null
                && !(entry != null ? entry.timerConfigRecorded : timerConfigRecorded)) {
            metaView.put(SqlDedupLayout.TIMER_CONFIG_KEY, timerConfig);
        }
        stored(meta, at, true);
    }

    @Override
    public long[] readPage(int slot, int stage, FilterSpec spec, long page) throws Exception {
        long key = StateLayout.pageKey(slot, stage, page);
        if (entry != null) {
            long[] cached = DedupStateCache.page(entry, key);
            if (cached != null) {
                return cached == DedupStateCache.ABSENT ? null : cached;
            }
        }
        byte[] bytes = pagesView.get(key);
        long[] words = bytes == null ? null : SqlDedupLayout.decode(bytes);
        if (entry != null) {
            cache.page(entry, key, words);
        }
        return words;
    }

    /** The page read (the cache's, or decoded for this call alone), or a new zeroed page. */
    @Override
    public long[] pageToWrite(int slot, int stage, FilterSpec spec, long page, long[] read) {
        return read == null ? new long[Pages.words(spec)] : read;
    }

    @Override
    public void pageWritten(int slot, int stage, FilterSpec spec, long page, long[] words)
            throws Exception {
        long key = StateLayout.pageKey(slot, stage, page);
        pagesView.put(key, SqlDedupLayout.encode(words));
        if (entry != null) {
            cache.page(entry, key, words);
        }
    }

    /** Binds the current row's exact key ({@code ExactKeys}), before the judge is called. */
    public void exactKey(String key) {
        this.exactKey = key;
    }

    @Override
    public boolean exactContains(int slot) throws Exception {
        return exactView.contains(SqlDedupLayout.exactEntry(slot, exactKey));
    }

    @Override
    public void exactAdd(int slot) throws Exception {
        exactView.put(SqlDedupLayout.exactEntry(slot, exactKey), Boolean.TRUE);
    }

    @Override
    public void dropSlots(long slots) throws Exception {
        Iterator<Long> keys = pagesView.keys().iterator();
        while (keys.hasNext()) {
            if ((slots & (1L << StateLayout.slotOf(keys.next()))) != 0) {
                keys.remove();
            }
        }
        if (entry != null) {
            cache.dropPages(entry);
        }
        if (exactView != null) {
            Iterator<String> exact = exactView.keys().iterator();
            while (exact.hasNext()) {
                if ((slots & (1L << SqlDedupLayout.slotOfExactEntry(exact.next()))) != 0) {
                    exact.remove();
                }
            }
        }
    }

    @Override
    public void clear() throws Exception {
        metaView.clear();
        pagesView.clear();
        if (exactView != null) {
            exactView.clear();
        }
        if (entry != null) {
            cache.dropPages(entry);
        }
        stored(null, DedupStateCache.NONE, timerConfig == null);
    }

    @Override
    public Iterable<Long> pageKeys() throws Exception {
        return pagesView.keys();
    }
}
