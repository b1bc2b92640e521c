package io.bloomstream.table.internal;

import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.state.FilterMeta;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.temporal.Temporal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * A read cache of {@code BLOOM_DEDUP}'s state, per partition key, written through: every change
 * goes to Flink state in the same call (the function has no hook before a checkpoint barrier, so
 * nothing may wait), and the cache only saves reads and their decoding.
 *
 * <p><b>Why it is sound.</b> A key's state is only changed by the subtask that owns the key's key
 * group, through this function's calls, which all go through the cache (writes included), except a
 * cleanup timer, which cannot name its key: the function {@link #clear clears} the whole cache
 * before such a timer and reads and writes state directly there. A timer that judges rows waiting
 * for the watermark ({@code first_by => 'EVENT_TIME'}) names its key by their partition columns and
 * goes through the cache, its cleanup included. A restore, a rescale or a failover deploys new
 * tasks, which deserialize new function instances: their caches start empty. State TTL (which Flink
 * applies to a PTF's state only when asked) could expire an entry behind the cache's back: the
 * cache then keeps the key's filter (it remembers longer than the TTL; it never forgets earlier).
 *
 * <p>Only keys whose Java equality is Flink's key equality are cached: strings, integers, booleans,
 * decimals, temporal values and BYTES (compared by content); a key with another column type (a
 * floating-point number, where NaN payloads and -0.0 differ in Flink's binary key, a nested row) is
 * read from state on every call. Bounded by {@code budgetBytes} (pages and an estimate of the
 * metadata), least recently used keys first. Not thread-safe: one per function instance.
 */
@Internal
public final class DedupStateCache {

    /** Marks a page known to be absent from state. */
    static final long[] ABSENT = new long[0];

    /** No metadata stored for the key. */
    static final int NONE = -1;

    /** Not known where the key's metadata is stored (not read in this call). */
    static final int UNKNOWN = -2;

    /** A partition key that is not cached. */
    public static final Object UNCACHED = new Object();

    private static final long ENTRY_BYTES = 256;
    private static final long PAGE_OVERHEAD = 64;

    /** The cached state of one partition key. */
    public static final class Entry {
        FilterMeta meta;
        boolean metaLoaded;

        /** Where meta is stored (a key of bloom_meta_v2, or {@link #NONE}). */
        int storedAt = NONE;

        /** Item-count changes of meta not written to state (see {@link SqlDedupStore}). */
        int unwritten;

        /** Whether the key's state records this task's timer config (see {@link SqlDedupStore}). */
        boolean timerConfigRecorded;

        final Map<Long, long[]> pages = new HashMap<>();
        long bytes = ENTRY_BYTES;
    }

    private final long budgetBytes;
    private final LinkedHashMap<Object, Entry> keys = new LinkedHashMap<>(256, 0.75f, true);
    private long bytes;
    private boolean defers;

    /**
     * The cache of a {@code BLOOM_DEDUP} task under {@code config}: its budget ({@link
     * DedupConfig#cacheBytesFor}, the keys not known in advance), and item counts that may lag in
     * state ({@link SqlDedupLayout#DEFERRED_META_KEY}) only without retention: with it, every timer
     * clears the cache, and each key read back would count its lag again.
     */
    public static DedupStateCache forConfig(DedupConfig config) {
        return new DedupStateCache(
                config.cacheBytesFor(0, Runtime.getRuntime().maxMemory()), !config.hasRetention());
    }

    /** A cache of at most about {@code budgetBytes} bytes; 0 caches nothing. */
    public DedupStateCache(long budgetBytes) {
        this(budgetBytes, false);
    }

    /**
     * A cache of at most about {@code budgetBytes} bytes; {@code defer}: cached keys' item counts
     * may lag in state ({@link #defers()}).
     */
    public DedupStateCache(long budgetBytes, boolean defer) {
        this.budgetBytes = budgetBytes;
        this.defers = defer && budgetBytes > 0;
    }

    /**
     * Whether cached keys may write their item counts late ({@link SqlDedupLayout#VERSION_3} and
     * later): true from the start when asked for, until the cache first drops a key (by {@link
     * #trim} or {@link #clear}), for good. A dropped key is read back with its lag counted as
     * items, so a cache that drops keys often would fill stages with counted items that are not
     * there: from then on writes are immediate again (and each key's next write records its counts
     * exactly).
     */
    public boolean defers() {
        return defers;
    }

    /**
     * The cache key of a partition key given by its columns' values (external types), or {@link
     * #UNCACHED}.
     */
    public static Object keyOf(Object[] columns) {
        if (columns.length == 1) {
            return keyOf(columns[0]);
        }
        List<Object> key = new ArrayList<>(columns.length);
        for (Object c : columns) {
            Object k = keyOf(c);
            if (k == UNCACHED) {
                return UNCACHED;
            }
            key.add(k);
        }
        return key;
    }

    private static Object keyOf(Object value) {
        if (value == null
                || value instanceof String
                || value instanceof Integer
                || value instanceof Long
                || value instanceof Short
                || value instanceof Byte
                || value instanceof Boolean
                || value instanceof BigDecimal
                || value instanceof Temporal) {
            return value;
        }
        if (value instanceof byte[] b) {
            return ByteBuffer.wrap(b);
        }
        return UNCACHED;
    }

    /** The entry of {@code key} (created empty when absent), or null if the key is not cached. */
    public Entry entry(Object key) {
        if (key == UNCACHED || budgetBytes <= 0) {
            return null;
        }
        Entry e = keys.get(key);
        if (e == null) {
            e = new Entry();
            keys.put(key, e);
            bytes += e.bytes;
        }
        return e;
    }

    /** Drops everything. */
    public void clear() {
        if (!keys.isEmpty()) {
            defers = false;
        }
        keys.clear();
        bytes = 0;
    }

    /** Drops the least recently used keys other than {@code current} while over the budget. */
    public void trim(Entry current) {
        Iterator<Entry> it = keys.values().iterator();
        while (bytes > budgetBytes && it.hasNext()) {
            Entry e = it.next();
            if (e != current) {
                it.remove();
                bytes -= e.bytes;
                defers = false;
            }
        }
    }

    /** The bytes the cache holds (an estimate). */
    public long bytes() {
        return bytes;
    }

    /** The cached page, {@link #ABSENT}, or null when not cached. */
    static long[] page(Entry e, long pageKey) {
        return e.pages.get(pageKey);
    }

    /** Records {@code words} (owned by the cache from now on; null: absent) as page's state. */
    void page(Entry e, long pageKey, long[] words) {
        long[] w = words == null ? ABSENT : words;
        long[] old = e.pages.put(pageKey, w);
        long delta = sizeOf(w) - (old == null ? 0 : sizeOf(old));
        e.bytes += delta;
        bytes += delta;
    }

    /** Drops the cached pages of {@code e} (its metadata stays). */
    void dropPages(Entry e) {
        long size = 0;
        for (long[] w : e.pages.values()) {
            size += sizeOf(w);
        }
        e.pages.clear();
        e.bytes -= size;
        bytes -= size;
    }

    private static long sizeOf(long[] words) {
        return PAGE_OVERHEAD + 8L * words.length;
    }
}
