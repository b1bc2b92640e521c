package io.bloomstream.filter;

/**
 * A 128-bit hash of one item, as two 64-bit halves. Filters derive the page and the k bit positions
 * of an item from these two values only, so any 128-bit hash can feed them.
 *
 * @param h1 the first (most significant) 64 bits
 * @param h2 the second (least significant) 64 bits
 */
public record Hash128(long h1, long h2) {

    @Override
    public String toString() {
        return String.format("%016x%016x", h1, h2);
    }
}
