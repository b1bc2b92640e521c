package io.bloomstream.table.internal;

import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.table.api.dataview.MapView;

/**
 * The state entries of one call of {@code BLOOM_DEDUP}, bound to the current partition key: the
 * entries of the current {@link SqlDedupLayout layout} ({@link SqlDedupLayout#VERSION_6}), the
 * entries of layouts 2 to 5 that a key of those layouts is moved from when first read ({@link
 * #moveFromLayout5}), and the rows waiting for the watermark. Flink hands the function its {@code
 * MapView}s on every call; the run binds them here and passes this one object on.
 */
@Internal
public final class SqlDedupViews {

    /** {@value SqlDedupLayout#META_V6_STATE}. */
    MapView<Integer, byte[]> meta;

    /** {@value SqlDedupLayout#PAGES_V6_STATE}. */
    MapView<Long, byte[]> pages;

    /** {@value SqlDedupLayout#EXACT_V6_STATE}. */
    MapView<String, Boolean> exact;

    /** {@value SqlDedupLayout#META_V2_STATE} (layouts 2 to 5). */
    MapView<Integer, byte[]> oldMeta;

    /** {@value SqlDedupLayout#PAGES_V2_STATE} (layouts 2 to 5). */
    MapView<Long, byte[]> oldPages;

    /** {@value SqlDedupLayout#EXACT_STATE} (layout 5). */
    MapView<String, Boolean> oldExact;

    /** {@value SqlDedupLayout#PENDING_STATE}. */
    MapView<Long, byte[]> pending;

    /** Binds the entries of the current call (the arguments in the order the function declares). */
    public SqlDedupViews bind(
            MapView<Integer, byte[]> oldMeta,
            MapView<Long, byte[]> oldPages,
            MapView<String, Boolean> oldExact,
            MapView<Integer, byte[]> meta,
            MapView<Long, byte[]> pages,
            MapView<String, Boolean> exact,
            MapView<Long, byte[]> pending) {
        this.oldMeta = oldMeta;
        this.oldPages = oldPages;
        this.oldExact = oldExact;
        this.meta = meta;
        this.pages = pages;
        this.exact = exact;
        this.pending = pending;
        return this;
    }

    /**
     * Moves the current key's state of layouts 2 to 5 to the entries of layout 6, when it has some
     * there: every entry of the old metadata (the metadata and the timer config keep their keys),
     * every page and every exact entry; then clears the old entries. Called where a key's metadata
     * is read from state and the current entries hold none: a key new to the state pays two point
     * reads of the old metadata here, once per read from state.
     *
     * @return whether the key had state to move
     */
    public boolean moveFromLayout5() throws Exception {
        if (oldMeta == null
                || (oldMeta.get(SqlDedupLayout.DEFERRED_META_KEY) == null
                        && oldMeta.get(SqlDedupLayout.META_KEY) == null)) {
            return false;
        }
        meta.putAll(copy(oldMeta.entries()));
        pages.putAll(copy(oldPages.entries()));
        if (oldExact != null) {
            exact.putAll(copy(oldExact.entries()));
            oldExact.clear();
        }
        oldMeta.clear();
        oldPages.clear();
        return true;
    }

    /** Whether the current key has no metadata in the current entries (none, or freed). */
    public boolean hasNoFilter() throws Exception {
        return meta.get(SqlDedupLayout.DEFERRED_META_KEY) == null
                && meta.get(SqlDedupLayout.META_KEY) == null;
    }

    /**
     * The current key's metadata in the current entries (the deferred one first, its lag not
     * counted), or null: for the config a timer derives from it.
     */
    FilterMeta storedMeta() throws Exception {
        byte[] bytes = meta.get(SqlDedupLayout.DEFERRED_META_KEY);
        if (bytes == null) {
            bytes = meta.get(SqlDedupLayout.META_KEY);
        }
        return bytes == null
                ? null
                : FilterMetaSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes));
    }

    /** The entries read off a view before it is changed (a view's iterator reads state lazily). */
    private static <K, V> Map<K, V> copy(Iterable<Map.Entry<K, V>> entries) {
        Map<K, V> map = new LinkedHashMap<>();
        for (Map.Entry<K, V> e : entries) {
            map.put(e.getKey(), e.getValue());
        }
        return map;
    }
}
