package io.bloomstream.table.internal;

import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.OwnedMetaState;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.types.Row;

/**
 * Views of {@code BLOOM_DEDUP}'s state entries as the {@link MapState} and {@link ValueState} that
 * the DataStream operator's state logic reads and writes, bound to the entries of each call, read
 * through a {@link DedupStateCache} and written through to state.
 *
 * <p><b>State layout 2</b> (bloomstream 0.5 with retention, and its snapshots before layout 3):
 * {@code bloom_meta_v2}, a {@code MapView<Integer, BYTES>} with one entry ({@link #META_KEY}): the
 * key's {@link FilterMeta} in the versioned format of {@link FilterMetaSerializer}; {@code
 * bloom_pages_v2}, a {@code MapView<Long, BYTES>}: page key ({@code StateLayout.pageKey}) to the
 * page's 64-bit words, little-endian, 8 bytes each; and the row {@code bloom_meta} of layout 1 with
 * {@code filter} NULL and the retention and generations the key was last written under. MapView
 * entries are read only when asked for; Flink reads a PTF's row state on every call and writes it
 * back when it changed, so the row holds only what a timer needs after a restore and changes only
 * with the config.
 *
 * <p><b>State layout 3</b> (this release, without retention): as layout 2, except that a key's
 * metadata may sit under {@link #DEFERRED_META_KEY} instead of {@link #META_KEY}: its item counts
 * then lag by fewer than {@link #deferLimit} changes, and a read adds that many less one (see
 * {@link Meta#updateCounts}). A first occurrence that only counts an item (no new page, stage or
 * generation) writes its page and not the metadata, except every {@code deferLimit}-th: on RocksDB
 * one write instead of two. Layout-2 state reads as it did (its counts are exact), and is written
 * under the deferred key at its next write.
 *
 * <p><b>State layout 1</b> (bloomstream 0.4): {@code bloom_meta} holds the whole {@code FilterMeta}
 * in its BYTES field {@code filter}, and {@code bloom_pages} is a {@code MapView<Long, long[]>}
 * ({@code ARRAY<BIGINT>}). {@link #migrate} moves a layout-1 key to layout 2 the first time the key
 * is seen (a row or a timer): {@code filter} non-NULL is what marks it.
 */
@Internal
public final class DedupStateViews {

    // Fields of the meta state row (see DedupTableFunction#META_TYPE).
    public static final int FILTER = 0;
    public static final int RETENTION_MS = 1;
    public static final int GENERATIONS = 2;

    /** The key of the metadata in {@code bloom_meta_v2}. */
    public static final int META_KEY = 0;

    /**
     * The key of the metadata in {@code bloom_meta_v2} when its item counts may lag (layout 3; see
     * {@link Meta#updateCounts}).
     */
    public static final int DEFERRED_META_KEY = 1;

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private DedupStateViews() {}

    /**
     * Moves the current key's layout-1 state (if {@code row}'s {@code filter} is set) to layout 2:
     * the metadata bytes (same format) to {@code meta}, every page to {@code pages}; clears the
     * layout-1 pages and {@code filter}.
     *
     * @return whether the key was in layout 1
     */
    public static boolean migrate(
            Row row,
            MapView<Long, long[]> oldPages,
            MapView<Integer, byte[]> meta,
            MapView<Long, byte[]> pages)
            throws Exception {
        byte[] filter = (byte[]) row.getField(FILTER);
        if (filter == null) {
            return false;
        }
        meta.put(META_KEY, filter);
        List<Map.Entry<Long, long[]>> entries = new ArrayList<>();
        for (Map.Entry<Long, long[]> e : oldPages.entries()) {
            entries.add(new AbstractMap.SimpleImmutableEntry<>(e.getKey(), e.getValue()));
        }
        for (Map.Entry<Long, long[]> e : entries) {
            pages.put(e.getKey(), encode(e.getValue()));
        }
        oldPages.clear();
        row.setField(FILTER, null);
        return true;
    }

    /** A page's words as layout-2 bytes (little-endian). */
    public static byte[] encode(long[] words) {
        byte[] b = new byte[8 * words.length];
        for (int i = 0; i < words.length; i++) {
            LONGS.set(b, 8 * i, words[i]);
        }
        return b;
    }

    /** A page's words from layout-2 bytes. */
    public static long[] decode(byte[] bytes) throws IOException {
        if (bytes.length % 8 != 0) {
            throw new IOException(
                    "Possible corruption: a page of " + bytes.length + " bytes (not words)");
        }
        long[] w = new long[bytes.length / 8];
        for (int i = 0; i < w.length; i++) {
            w[i] = (long) LONGS.get(bytes, 8 * i);
        }
        return w;
    }

    /**
     * The key's {@link FilterMeta} in {@code bloom_meta_v2}, through the cache. Each write also
     * records the retention and generations of the config in the row, so that a timer firing after
     * a restore, before any row reached the function, frees state under the config it was written
     * with.
     */
    public static final class Meta implements OwnedMetaState {
        private final DataOutputSerializer out = new DataOutputSerializer(256);
        private final DataInputDeserializer in = new DataInputDeserializer();
        private Row row;
        private MapView<Integer, byte[]> view;
        private DedupStateCache cache;
        private DedupStateCache.Entry entry;
        private long retentionMillis;
        private int generations;

        /** Where the current key's metadata is stored: NONE, META_KEY, DEFERRED_META_KEY, or -2. */
        private int storedAt;

        /**
         * Binds the view to a call's state.
         *
         * @param cache the function's cache: whether item counts may be deferred ({@link
         *     DedupStateCache#defers()})
         * @param entry the key's cache entry, or null to read state on every access (then every
         *     write is immediate)
         */
        public void bind(
                Row row,
                MapView<Integer, byte[]> view,
                DedupStateCache cache,
                DedupStateCache.Entry entry,
                long retentionMillis,
                int generations) {
            this.row = row;
            this.view = view;
            this.cache = cache;
            this.entry = entry;
            this.retentionMillis = retentionMillis;
            this.generations = generations;
            this.storedAt = entry != null && entry.metaLoaded ? entry.storedAt : UNKNOWN;
        }

        @Override
        public FilterMeta value() throws IOException {
            if (entry != null && entry.metaLoaded) {
                return entry.meta;
            }
            byte[] bytes = get(view, DEFERRED_META_KEY);
            boolean deferred = bytes != null;
            if (!deferred) {
                bytes = get(view, META_KEY);
            }
            FilterMeta meta = null;
            if (bytes != null) {
                in.setBuffer(bytes);
                meta = FilterMetaSerializer.INSTANCE.deserialize(in);
                if (deferred) {
                    countDeferredItems(meta);
                }
            }
            storedAt = deferred ? DEFERRED_META_KEY : bytes != null ? META_KEY : NONE;
            if (entry != null) {
                entry.meta = meta;
                entry.metaLoaded = true;
                entry.storedAt = storedAt;
                entry.unwritten = 0;
            }
            return meta;
        }

        /**
         * Writes {@code meta} and keeps it as the key's cached metadata (not copied: the caller
         * owns it, see {@link OwnedMetaState}; {@link #value()} hands the same object out again).
         */
        @Override
        public void update(FilterMeta meta) throws IOException {
            write(meta);
        }

        /**
         * Keeps {@code meta}, whose item counts alone changed, in the cache, and writes it only
         * every {@link #deferLimit} such changes while the cache {@link DedupStateCache#defers()}
         * (layout 3): a key whose writes lag is stored under {@link #DEFERRED_META_KEY}, and {@link
         * #value()} adds {@code deferLimit - 1} items to the newest stage of each of its
         * generations when it reads it back (a restore, a rescale, a key the cache dropped), at
         * least as many as were not written.
         */
        @Override
        public void updateCounts(FilterMeta meta) throws IOException {
            if (entry == null || !cache.defers()) {
                write(meta);
                return;
            }
            entry.meta = meta;
            entry.metaLoaded = true;
            if (++entry.unwritten < deferLimit(meta)) {
                return;
            }
            write(meta);
        }

        private void write(FilterMeta meta) throws IOException {
            int at = entry != null && cache.defers() ? DEFERRED_META_KEY : META_KEY;
            out.clear();
            FilterMetaSerializer.INSTANCE.serialize(meta, out);
            try {
                view.put(at, out.getCopyOfBuffer());
                if (storedAt != NONE && storedAt != at) {
                    // the other entry is older: never read it again (UNKNOWN: remove it anyway)
                    view.remove(at == META_KEY ? DEFERRED_META_KEY : META_KEY);
                }
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("cannot write " + at + " of bloom_meta_v2", e);
            }
            storedAt = at;
            row.setField(FILTER, null);
            row.setField(RETENTION_MS, retentionMillis);
            row.setField(GENERATIONS, generations);
            if (entry != null) {
                entry.meta = meta;
                entry.metaLoaded = true;
                entry.storedAt = at;
                entry.unwritten = 0;
            }
        }

        private static byte[] get(MapView<Integer, byte[]> view, int key) throws IOException {
            try {
                return view.get(key);
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("cannot read bloom_meta_v2", e);
            }
        }

        @Override
        public void clear() {
            try {
                view.remove(META_KEY);
                view.remove(DEFERRED_META_KEY);
            } catch (Exception e) {
                throw new IllegalStateException("cannot clear bloom_meta_v2", e);
            }
            for (int i = 0; i < row.getArity(); i++) {
                row.setField(i, null);
            }
            storedAt = NONE;
            if (entry != null) {
                entry.meta = null;
                entry.metaLoaded = true;
                entry.storedAt = NONE;
                entry.unwritten = 0;
            }
        }
    }

    /** No metadata stored for the key. */
    static final int NONE = -1;

    /** Not known where the key's metadata is stored (not read in this call). */
    static final int UNKNOWN = -2;

    /**
     * How many item-count changes a key's metadata may lag in state (layout 3): 1/64 of the
     * smallest capacity among the newest stages of its generations, between 1 and 64. A reload adds
     * one less than this to each of those stages, at most 1.6% of a stage's capacity (at least 1
     * item in 64 of small stages). It depends only on what is stored (the stages' capacities), and
     * every change of them is written at once, so the limit a read computes is the one that applied
     * while the writes lagged.
     */
    static int deferLimit(FilterMeta meta) {
        long smallest = Long.MAX_VALUE;
        for (List<FilterMeta.Stage> stages : meta.slots) {
            if (!stages.isEmpty()) {
                smallest = Math.min(smallest, stages.get(stages.size() - 1).capacity);
            }
        }
        return (int) Math.max(1, Math.min(MAX_DEFERRED, smallest / 64));
    }

    /** The most item-count changes a key's metadata lags in state. */
    static final int MAX_DEFERRED = 64;

    /** Counts the items a deferred metadata may not have recorded (see {@link #deferLimit}). */
    static void countDeferredItems(FilterMeta meta) {
        int slack = deferLimit(meta) - 1;
        for (List<FilterMeta.Stage> stages : meta.slots) {
            if (!stages.isEmpty()) {
                stages.get(stages.size() - 1).itemsAdded += slack;
            }
        }
    }

    /**
     * The key's pages in {@code bloom_pages_v2}: page key ({@code StateLayout.pageKey}) to the
     * page's words. Reads go through the cache; it never shares an array with its caller ({@code
     * get} returns a copy, {@code put} keeps one), so a caller's mutation reaches the cache only by
     * {@code put}, which writes state in the same call.
     */
    public static final class Pages implements MapState<Long, long[]> {
        private MapView<Long, byte[]> view;
        private DedupStateCache cache;
        private DedupStateCache.Entry entry;

        /**
         * Binds the view to a call's state.
         *
         * @param entry the key's cache entry, or null to read state on every access
         */
        public void bind(
                MapView<Long, byte[]> view, DedupStateCache cache, DedupStateCache.Entry entry) {
            this.view = view;
            this.cache = cache;
            this.entry = entry;
        }

        @Override
        public long[] get(Long key) throws Exception {
            if (entry != null) {
                long[] cached = DedupStateCache.page(entry, key);
                if (cached != null) {
                    return cached == DedupStateCache.ABSENT ? null : cached.clone();
                }
            }
            byte[] bytes = view.get(key);
            long[] words = bytes == null ? null : decode(bytes);
            if (entry != null) {
                cache.page(entry, key, words);
                return words == null ? null : words.clone();
            }
            return words;
        }

        @Override
        public void put(Long key, long[] value) throws Exception {
            view.put(key, encode(value));
            if (entry != null) {
                cache.page(entry, key, value.clone());
            }
        }

        @Override
        public void putAll(Map<Long, long[]> map) throws Exception {
            for (Map.Entry<Long, long[]> e : map.entrySet()) {
                put(e.getKey(), e.getValue());
            }
        }

        @Override
        public void remove(Long key) throws Exception {
            view.remove(key);
            if (entry != null) {
                cache.page(entry, key, null);
            }
        }

        @Override
        public boolean contains(Long key) throws Exception {
            return get(key) != null;
        }

        /** Iterating may remove entries behind the cache: the key's cached pages are dropped. */
        @Override
        public Iterable<Map.Entry<Long, long[]>> entries() throws Exception {
            uncache();
            Iterable<Map.Entry<Long, byte[]>> raw = view.entries();
            return () -> {
                Iterator<Map.Entry<Long, byte[]>> it = raw.iterator();
                return new Iterator<>() {
                    @Override
                    public boolean hasNext() {
                        return it.hasNext();
                    }

                    @Override
                    public Map.Entry<Long, long[]> next() {
                        Map.Entry<Long, byte[]> e = it.next();
                        try {
                            return new AbstractMap.SimpleImmutableEntry<>(
                                    e.getKey(), decode(e.getValue()));
                        } catch (IOException x) {
                            throw new IllegalStateException("page " + e.getKey(), x);
                        }
                    }

                    @Override
                    public void remove() {
                        it.remove();
                    }
                };
            };
        }

        @Override
        public Iterable<Long> keys() throws Exception {
            uncache();
            return view.keys();
        }

        @Override
        public Iterable<long[]> values() throws Exception {
            List<long[]> values = new ArrayList<>();
            for (Map.Entry<Long, long[]> e : entries()) {
                values.add(e.getValue());
            }
            return values;
        }

        @Override
        public Iterator<Map.Entry<Long, long[]>> iterator() throws Exception {
            return entries().iterator();
        }

        @Override
        public boolean isEmpty() throws Exception {
            return view.isEmpty();
        }

        @Override
        public void clear() {
            view.clear();
            uncache();
        }

        private void uncache() {
            if (entry != null) {
                cache.dropPages(entry);
            }
        }
    }
}
