package io.bloomstream.flink.state;

import org.apache.flink.annotation.Internal;

/**
 * What {@link FilterJudge} reports of the filters it judges with (dedup's metrics implement it).
 */
@Internal
public interface FilterMetrics {

    /** A stage of {@code items} items in {@code bits} bits was used; the key has {@code stages}. */
    void observe(long items, long bits, int hashes, int pageBits, int stages);

    /** Pages were allocated (or, negative, freed). */
    void pagesAllocated(long delta);

    /** A generation was widened to hold a bucket no generation held (all slots were in use). */
    void generationWidened();

    /** A stage of fixed growth passed its capacity. */
    void overCapacity();

    /**
     * Exact mode: the filter answered "maybe" and the exact entries were read; {@code found} false
     * is a false positive of the filter that exact mode kept from dropping a first occurrence.
     */
    default void exactRead(boolean found) {}

    /**
     * Exact mode: the exact entries held changed by {@code delta}: added with their id, counted
     * when a restored key is first read (its items), subtracted when their generation or key is
     * dropped.
     */
    default void exactEntries(long delta) {}
}
