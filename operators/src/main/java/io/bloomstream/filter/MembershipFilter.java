package io.bloomstream.filter;

import java.util.Objects;

/**
 * What every filter here answers: "might this item have been added?". A "no" is certain (no false
 * negatives); a "yes" is wrong with the filter's false-positive rate.
 *
 * <p>Items are hashed by the filter's {@link Hasher}: byte arrays as they are, strings as UTF-8,
 * longs as 8 little-endian bytes. The {@code (h1, h2)} methods take a precomputed {@link Hash128}
 * so a caller that checks several filters hashes once. Null items are rejected with a {@link
 * NullPointerException}, never treated as absent.
 */
public interface MembershipFilter {

    /** The hasher that maps items to 128-bit hashes. */
    Hasher hasher();

    /** Adds the item with this hash. */
    void add(long h1, long h2);

    /** Whether the item with this hash might have been added (false means certainly not). */
    boolean mightContain(long h1, long h2);

    /**
     * Adds the item with this hash unless it might already be present, in one pass: the dedup
     * primitive.
     *
     * @return true if the item was certainly new (and is now added), false if it might have been
     *     seen before (then nothing changed)
     */
    boolean addIfAbsent(long h1, long h2);

    /** The distinct-count estimate from the filter's bits. */
    Estimate estimate();

    /** The items taken as new so far. */
    long itemsAdded();

    /**
     * The theoretical false-positive rate at {@link #itemsAdded()} items under the layout's model:
     * the rate a "might contain" answer for an item never added is wrong with.
     */
    double expectedFpp();

    /** Adds {@code hash}. */
    default void add(Hash128 hash) {
        add(hash.h1(), hash.h2());
    }

    /** See {@link #mightContain(long, long)}. */
    default boolean mightContain(Hash128 hash) {
        return mightContain(hash.h1(), hash.h2());
    }

    /** See {@link #addIfAbsent(long, long)}. */
    default boolean addIfAbsent(Hash128 hash) {
        return addIfAbsent(hash.h1(), hash.h2());
    }

    /** Adds the bytes. */
    default void add(byte[] item) {
        add(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** Adds the UTF-8 bytes of the string. */
    default void add(String item) {
        add(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** Adds the 8 little-endian bytes of the long. */
    default void add(long item) {
        add(hasher().hash(item));
    }

    /** Whether the bytes might have been added. */
    default boolean mightContain(byte[] item) {
        return mightContain(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** Whether the string might have been added. */
    default boolean mightContain(String item) {
        return mightContain(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** Whether the long might have been added. */
    default boolean mightContain(long item) {
        return mightContain(hasher().hash(item));
    }

    /** See {@link #addIfAbsent(long, long)}. */
    default boolean addIfAbsent(byte[] item) {
        return addIfAbsent(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** See {@link #addIfAbsent(long, long)}. */
    default boolean addIfAbsent(String item) {
        return addIfAbsent(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** See {@link #addIfAbsent(long, long)}. */
    default boolean addIfAbsent(long item) {
        return addIfAbsent(hasher().hash(item));
    }
}
