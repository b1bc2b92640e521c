package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import org.apache.flink.annotation.Internal;

/**
 * The state of one key's filter as {@link FilterJudge} reads and writes it: the key's {@link
 * FilterMeta} and its pages, keyed by (generation slot, cascade stage, page index). The seam
 * between the judging logic, written once, and each place the state lives (Flink keyed state behind
 * the DataStream operator's write-back cache, the SQL function's {@code MapView}s): an
 * implementation is bound to the current key by its owner before each call of the judge, and
 * decides how and when what it is given reaches durable state, so long as a snapshot taken at any
 * point its owner allows holds every change made before it.
 *
 * <p>Ownership: {@link #readMeta} returns an object that the judge may change in place and passes
 * back to {@link #writeMeta} before its call returns; the store never shares it with anyone who
 * could see the change (an asynchronous snapshot, say). A page returned by {@link #readPage} is
 * read-only; one returned by {@link #pageToWrite} is the judge's to change until it calls {@link
 * #pageWritten}.
 *
 * <p>Exact mode ({@link FilterJudge.Settings#exact}): the store also keeps, per generation slot,
 * the ids themselves (their {@link ExactKeys exact keys}), and its owner binds the current event's
 * exact key before each call of the judge. The judge reads them only when the filter answers
 * "maybe", and adds the id to them whenever it adds it to the filter, so a slot's exact entries
 * hold every id of its filter that was added in exact mode. {@link #dropSlots} and {@link #clear}
 * drop them with the pages.
 */
@Internal
public interface FilterStore {

    /** The current key's metadata (the caller's to change, see above), or null for a new key. */
    FilterMeta readMeta() throws Exception;

    /**
     * Writes the current key's metadata.
     *
     * @param countsOnly only stages' item counts ({@link FilterMeta.Stage#itemsAdded}) changed
     *     since the last read or write: a store may defer such a write if whatever reads the
     *     metadata back counts at least the deferred items (a stage that counts more items than it
     *     holds fills early, which keeps its false-positive rate within the bound, never above it)
     */
    void writeMeta(FilterMeta meta, boolean countsOnly) throws Exception;

    /**
     * Page {@code page} of (slot, stage) of the current key, a stage of shape {@code spec}, or null
     * when the key has no such page. Read-only.
     */
    long[] readPage(int slot, int stage, FilterSpec spec, long page) throws Exception;

    /**
     * An array of the page that the caller may change: {@code read} itself when the store lets its
     * caller own it, else a copy of it, or a new zeroed page of {@code Pages.words(spec)} words
     * when {@code read} is null (the page is absent).
     *
     * @param read the page as {@link #readPage} returned it in this call
     */
    long[] pageToWrite(int slot, int stage, FilterSpec spec, long page, long[] read)
            throws Exception;

    /** Stores the page that {@link #pageToWrite} returned, now changed. */
    void pageWritten(int slot, int stage, FilterSpec spec, long page, long[] words)
            throws Exception;

    /**
     * Whether generation slot {@code slot}'s exact entries hold the current event's id (exact mode
     * only: a store that keeps none need not implement it).
     */
    default boolean exactContains(int slot) throws Exception {
        throw new UnsupportedOperationException("this store keeps no exact entries");
    }

    /** Adds the current event's id to generation slot {@code slot}'s exact entries (exact mode). */
    default void exactAdd(int slot) throws Exception {
        throw new UnsupportedOperationException("this store keeps no exact entries");
    }

    /**
     * Removes every page, and in exact mode every exact entry, of the generation slots in {@code
     * slots} (bit s: slot s); the metadata is written separately.
     */
    void dropSlots(long slots) throws Exception;

    /** Removes the current key's metadata, every page and every exact entry. */
    void clear() throws Exception;

    /**
     * The page keys ({@link StateLayout#pageKey}) the current key holds; read once per key whose
     * metadata does not record its page counts (state of bloomstream 0.1).
     */
    Iterable<Long> pageKeys() throws Exception;
}
