package io.bloomstream.table.internal;

import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.types.Row;

/**
 * The <b>SQL dedup layout</b>: how {@code BLOOM_DEDUP} keeps a partition key's filter in its
 * process table function state, a versioned artefact of its own (apart from the metadata format of
 * {@link FilterMetaSerializer}, which its metadata bytes use, and from the DataStream operator's
 * state). The state entries (names and types are part of the savepoint contract):
 *
 * <ul>
 *   <li>{@value #META_V6_STATE}, {@value #PAGES_V6_STATE} and {@value #EXACT_V6_STATE}, the entries
 *       of {@link #VERSION_6}: as {@value #META_V2_STATE}, {@value #PAGES_V2_STATE} and {@value
 *       #EXACT_STATE} below (the same keys and values), declared without Flink's state TTL ({@code
 *       "0 ms"}), so no TTL wrapper serializes or checks a value;
 *   <li>{@value #META_STATE}, a row {@value #META_TYPE}, layouts 1 to 5: Flink reads a declared row
 *       on every call and writes it back when it changed (a declared row state is never lazy in
 *       Flink 2.2 and 2.3), so layout 6 declares none: {@code DedupTableFunction} does not declare
 *       it, and only the deprecated {@code LegacyDedupTableFunction} reads it;
 *   <li>{@value #PAGES_STATE}, a {@code MapView<BIGINT, ARRAY<BIGINT>>} of pages;
 *   <li>{@value #META_V2_STATE}, a {@code MapView<INT, BYTES>}: the metadata, in the format of
 *       {@link FilterMetaSerializer}, under {@link #META_KEY} or {@link #DEFERRED_META_KEY}, and
 *       the retention it was written under at {@link #TIMER_CONFIG_KEY};
 *   <li>{@value #PAGES_V2_STATE}, a {@code MapView<BIGINT, BYTES>}: page key ({@code
 *       StateLayout.pageKey}) to the page's 64-bit words, little-endian ({@link #encode});
 *   <li>{@value #EXACT_STATE}, a {@code MapView<STRING, BOOLEAN>}, written in exact mode only: one
 *       entry per id and generation slot holding it ({@link #exactEntry}: the slot as one char,
 *       then the id's {@code ExactKeys} exact key), the value TRUE.
 * </ul>
 *
 * <p>The versions, each with its golden snapshots ({@code BloomDedupGoldenSnapshotTest}):
 *
 * <ul>
 *   <li>{@link #VERSION_1} (bloomstream 0.4): the whole metadata in the row's {@code filter}, pages
 *       in {@value #PAGES_STATE};
 *   <li>{@link #VERSION_2} (0.5 with a retention): metadata under {@link #META_KEY} and pages in
 *       the v2 views; the row holds only the retention and generations, for a timer that fires
 *       after a restore before any row reached the task;
 *   <li>{@link #VERSION_3} (0.5 without retention): as 2, with the metadata under {@link
 *       #DEFERRED_META_KEY} while its item counts may lag by fewer than {@link #deferLimit} changes
 *       (a read counts the lag as items: {@link #countDeferredItems});
 *   <li>{@link #VERSION_4} (0.5, before exact mode): as 3, with the retention and generations,
 *       under a retention only, at {@link #TIMER_CONFIG_KEY}, written once per key and retention,
 *       and the row holding only {@link #ROW_MARKER} in {@link #GENERATIONS} ({@link #markRow}:
 *       written once per key, never empty while the key has state);
 *   <li>{@link #VERSION_5} (0.5 snapshots): as 4, with the exact entries of {@code exact => TRUE}
 *       in {@value #EXACT_STATE}. A key of layout 4 needs no move: it has no exact entries, so the
 *       duplicates of ids added before exact mode was switched on may pass once more;
 *   <li>{@link #VERSION_6} (this release): the entries of 5 under the names {@value
 *       #META_V6_STATE}, {@value #PAGES_V6_STATE} and {@value #EXACT_V6_STATE}, declared without
 *       Flink's state TTL, and no row state at all.
 * </ul>
 *
 * <p>A key of layouts 2 to 5 moves to layout 6 when its metadata is first read from state, by a row
 * or a timer ({@link SqlDedupViews#moveFromLayout5}). The config of a retention that layouts 2 and
 * 3 kept in the row is not read again: a timer that fires before any row derives it from the key's
 * metadata ({@code SqlDedupRun}), a bound of it by at most G - 2 ms (the generation length is the
 * retention over G - 1, rounded up), so it frees state that late, never early. A key of layout 1
 * (bloomstream 0.4) keeps its metadata in the row: only the deprecated {@code
 * LegacyDedupTableFunction} reads it, moving it with {@link #migrate} to the entries of layout 4,
 * and on to 6 (docs/upgrading.md).
 */
@Internal
public final class SqlDedupLayout {

    /** bloomstream 0.4: the metadata in the row, pages as {@code ARRAY<BIGINT>}. */
    public static final int VERSION_1 = 1;

    /** bloomstream 0.5 with a retention: metadata and pages as BYTES; the config in the row. */
    public static final int VERSION_2 = 2;

    /** bloomstream 0.5 without retention: as 2, item counts that may lag under their own key. */
    public static final int VERSION_3 = 3;

    /**
     * bloomstream 0.5 before exact mode: as 3, the row a marker, the timer's config beside the
     * metadata.
     */
    public static final int VERSION_4 = 4;

    /**
     * bloomstream 0.5 snapshots: as 4, with the exact entries of exact mode in {@value
     * #EXACT_STATE}.
     */
    public static final int VERSION_5 = 5;

    /**
     * This release: the entries of layout 5 under new names ({@value #META_V6_STATE}, {@value
     * #PAGES_V6_STATE}, {@value #EXACT_V6_STATE}) without Flink's state TTL, and no row.
     */
    public static final int VERSION_6 = 6;

    /** The version this release writes. */
    public static final int CURRENT_VERSION = VERSION_6;

    /** The row state (part of the savepoint contract). */
    public static final String META_STATE = "bloom_meta";

    /** The pages of version 1 (part of the savepoint contract). */
    public static final String PAGES_STATE = "bloom_pages";

    /** The metadata of versions 2 to 4 (part of the savepoint contract). */
    public static final String META_V2_STATE = "bloom_meta_v2";

    /** The pages of versions 2 to 4 (part of the savepoint contract). */
    public static final String PAGES_V2_STATE = "bloom_pages_v2";

    /** The exact entries of version 5 (part of the savepoint contract). */
    public static final String EXACT_STATE = "bloom_exact";

    /** The metadata of version 6, without Flink's state TTL (part of the savepoint contract). */
    public static final String META_V6_STATE = "bloom_meta_v6";

    /** The pages of version 6, without Flink's state TTL (part of the savepoint contract). */
    public static final String PAGES_V6_STATE = "bloom_pages_v6";

    /** The exact entries of version 6, without Flink's TTL (part of the savepoint contract). */
    public static final String EXACT_V6_STATE = "bloom_exact_v6";

    /**
     * Name of the per-key rows waiting for the watermark under {@code first_by => 'EVENT_TIME'}
     * ({@link PendingRows}; part of the savepoint contract). Beside the filter state of any
     * version: a key's filter layout does not depend on it, and it is empty between watermarks.
     */
    public static final String PENDING_STATE = "bloom_pending";

    /** The type of {@value #META_STATE}. */
    public static final String META_TYPE =
            "ROW<filter BYTES, retention_ms BIGINT, generations INT>";

    /** Field of the row: the whole metadata (version 1). */
    public static final int FILTER = 0;

    /** Field of the row: the retention in ms (versions 2 and 3). */
    public static final int RETENTION_MS = 1;

    /** Field of the row: the generations (versions 2 and 3). */
    public static final int GENERATIONS = 2;

    /** The key of the metadata in {@value #META_V2_STATE}, its item counts exact. */
    public static final int META_KEY = 0;

    /** The key of the metadata in {@value #META_V2_STATE} when its item counts may lag. */
    public static final int DEFERRED_META_KEY = 1;

    /**
     * The key in {@value #META_V2_STATE} of the retention and generations a key under retention was
     * last written with (version 4; {@link #encodeTimerConfig}).
     */
    public static final int TIMER_CONFIG_KEY = 2;

    /** The most item-count changes a key's metadata lags in state. */
    public static final int MAX_DEFERRED = 64;

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private static final VarHandle INTS =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private SqlDedupLayout() {}

    /**
     * The version of a key's state as far as the row tells: {@link #VERSION_1} when it holds the
     * metadata, {@link #VERSION_2} when it holds a config (version 2 or 3: they differ only in
     * where the metadata sits, which every read handles), else {@link #VERSION_4} (a marker or
     * nothing: layout 4 or later, or a new key; the row says no more).
     */
    public static int versionOf(Row row) {
        if (row.getField(FILTER) != null) {
            return VERSION_1;
        }
        return row.getField(RETENTION_MS) != null ? VERSION_2 : VERSION_4;
    }

    /**
     * Marks the row of a key judged under {@link #VERSION_4}: its {@link #GENERATIONS} field holds
     * {@link #ROW_MARKER} (and {@link #RETENTION_MS} stays NULL, which tells it from versions 2 and
     * 3). The row carries nothing else; it is kept non-empty because Flink 2.2 and 2.3 read a
     * declared row on every call and clear it when every field is NULL: an empty row costs a delete
     * per call, and on the heap backend each access of the emptied state runs the TTL's incremental
     * cleanup over an empty table (it walks every key group: 3x the CPU per row of the whole query,
     * measured in benchmarks/results/issue-30.md, "SQL dedup layout 4 and the empty row"). A marked
     * row is written once per key and then only read, as versions 2 and 3's config was.
     */
    public static void markRow(Row row) {
        if (row.getField(GENERATIONS) == null) {
            row.setField(GENERATIONS, ROW_MARKER);
        }
    }

    /** Empties a key's row once its state is freed (Flink then clears it). */
    public static void unmarkRow(Row row) {
        for (int i = 0; i < row.getArity(); i++) {
            row.setField(i, null);
        }
    }

    /**
     * The value of the {@link #GENERATIONS} field of a row of layout 4 or later: 4, as layout 4
     * wrote it (only its presence is read, so layout 5 keeps it).
     */
    public static final int ROW_MARKER = VERSION_4;

    /**
     * Moves the current key's state of versions 1 to 3 to the entries of {@link #VERSION_4} (a row
     * of a later version is left as it is): version 1's metadata bytes (same format) to {@link
     * #META_KEY} and its pages to {@code pages}; the config of versions 2 and 3 from the row to
     * {@link #TIMER_CONFIG_KEY} (under a retention); and empties the row.
     *
     * @return the version the key was in
     */
    public static int migrate(
            Row row,
            MapView<Long, long[]> oldPages,
            MapView<Integer, byte[]> meta,
            MapView<Long, byte[]> pages)
            throws Exception {
        int version = versionOf(row);
        switch (version) {
            case VERSION_1:
                meta.put(META_KEY, (byte[]) row.getField(FILTER));
                List<Map.Entry<Long, long[]>> entries = new ArrayList<>();
                for (Map.Entry<Long, long[]> e : oldPages.entries()) {
                    entries.add(new AbstractMap.SimpleImmutableEntry<>(e.getKey(), e.getValue()));
                }
                for (Map.Entry<Long, long[]> e : entries) {
                    pages.put(e.getKey(), encode(e.getValue()));
                }
                oldPages.clear();
            // fall through: version 1 recorded its config in the row as version 2 does
            case VERSION_2:
            case VERSION_3:
                Long retention = (Long) row.getField(RETENTION_MS);
                Integer generations = (Integer) row.getField(GENERATIONS);
                if (retention != null && retention > 0 && generations != null) {
                    meta.put(TIMER_CONFIG_KEY, encodeTimerConfig(retention, generations));
                }
                for (int i = 0; i < row.getArity(); i++) {
                    row.setField(i, null);
                }
                return version;
            default:
                return version;
        }
    }

    /**
     * The key in {@value #EXACT_STATE} of an id's exact entry in generation slot {@code slot}: the
     * slot as one char, then the id's exact key. One entry per slot rather than one per id with a
     * bit set of slots, so that adding an id is a write without a read (a new id, which the filters
     * answered "no", reads no exact entry at all), as for the DataStream operator's namespaced
     * entries.
     */
    public static String exactEntry(int slot, String exactKey) {
        return (char) slot + exactKey;
    }

    /** The generation slot of a key of {@value #EXACT_STATE} ({@link #exactEntry}). */
    public static int slotOfExactEntry(String entry) {
        return entry.charAt(0);
    }

    /** A page's words as bytes (little-endian). */
    public static byte[] encode(long[] words) {
        byte[] b = new byte[8 * words.length];
        for (int i = 0; i < words.length; i++) {
            LONGS.set(b, 8 * i, words[i]);
        }
        return b;
    }

    /** A page's words from its bytes. */
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

    /** The value at {@link #TIMER_CONFIG_KEY}: the retention (8 bytes) and generations (4). */
    public static byte[] encodeTimerConfig(long retentionMillis, int generations) {
        byte[] b = new byte[12];
        LONGS.set(b, 0, retentionMillis);
        INTS.set(b, 8, generations);
        return b;
    }

    /** The retention in a value of {@link #TIMER_CONFIG_KEY}. */
    public static long timerRetentionMillis(byte[] config) throws IOException {
        checkTimerConfig(config);
        return (long) LONGS.get(config, 0);
    }

    /** The generations in a value of {@link #TIMER_CONFIG_KEY}. */
    public static int timerGenerations(byte[] config) throws IOException {
        checkTimerConfig(config);
        return (int) INTS.get(config, 8);
    }

    private static void checkTimerConfig(byte[] config) throws IOException {
        if (config.length != 12) {
            throw new IOException(
                    "Possible corruption: a timer config of "
                            + config.length
                            + " bytes in "
                            + META_V2_STATE
                            + " (expected 12)");
        }
    }

    /**
     * How many item-count changes a key's metadata may lag in state: 1/64 of the smallest capacity
     * among the newest stages of its generations, between 1 and {@value #MAX_DEFERRED}. A reload
     * adds one less than this to each of those stages, at most 1.6% of a stage's capacity (at least
     * 1 item in 64 of small stages). It depends only on what is stored (the stages' capacities),
     * and every change of them is written at once, so the limit a read computes is the one that
     * applied while the writes lagged.
     */
    public static int deferLimit(FilterMeta meta) {
        long smallest = Long.MAX_VALUE;
        for (List<FilterMeta.Stage> stages : meta.slots) {
            if (!stages.isEmpty()) {
                smallest = Math.min(smallest, stages.get(stages.size() - 1).capacity);
            }
        }
        return (int) Math.max(1, Math.min(MAX_DEFERRED, smallest / 64));
    }

    /**
     * Counts the items a metadata read from {@link #DEFERRED_META_KEY} may lack (see {@link
     * #deferLimit}): an upper bound, so a stage fills early, never late.
     */
    public static void countDeferredItems(FilterMeta meta) {
        int slack = deferLimit(meta) - 1;
        for (List<FilterMeta.Stage> stages : meta.slots) {
            if (!stages.isEmpty()) {
                stages.get(stages.size() - 1).itemsAdded += slack;
            }
        }
    }
}
