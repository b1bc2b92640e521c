package io.bloomstream.filter;

/**
 * Bloom operations on one page held as its own {@code long[]}: what a Flink operator does with a
 * page it read from state. The page of an item is {@link FilterSpec#page(long)}; its words are
 * {@link #words(FilterSpec)} longs.
 */
public final class Pages {

    private Pages() {}

    /** The number of 64-bit words in one page of {@code spec}. */
    public static int words(FilterSpec spec) {
        int w = spec.pageWords(1);
        if (w > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(
                    "a page of " + spec.bitsPerPage() + " bits does not fit one long[]");
        }
        return w;
    }

    /**
     * Whether all k bits of the item (h1, h2) are set in its page {@code words}; {@code scratch}
     * (at least k longs) receives the positions.
     */
    public static boolean mightContain(
            FilterSpec spec, long[] words, long h1, long h2, long[] scratch) {
        long[] pos = scratch;
        spec.positions(h1, h2, pos);
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long bit = pos[i];
            if ((words[(int) (bit >>> 6)] & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Sets the k bits of the item (h1, h2) in its page; returns whether any bit was clear. {@code
     * scratch} (at least k longs) receives the positions.
     */
    public static boolean add(FilterSpec spec, long[] words, long h1, long h2, long[] scratch) {
        long[] pos = scratch;
        spec.positions(h1, h2, pos);
        boolean changed = false;
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long bit = pos[i];
            int w = (int) (bit >>> 6);
            long mask = 1L << bit;
            changed |= (words[w] & mask) == 0;
            words[w] |= mask;
        }
        return changed;
    }

    /**
     * Sets the k bits of the item (h1, h2) in its page as {@link #add} does, and returns how many
     * of them were clear: the change of the page's {@link #bitCount}, so a caller can keep a
     * filter's set-bit count without scanning its pages. {@code scratch} (at least k longs)
     * receives the positions.
     */
    public static int addCounting(FilterSpec spec, long[] words, long h1, long h2, long[] scratch) {
        long[] pos = scratch;
        spec.positions(h1, h2, pos);
        int newBits = 0;
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long bit = pos[i];
            int w = (int) (bit >>> 6);
            long mask = 1L << bit;
            if ((words[w] & mask) == 0) {
                words[w] |= mask;
                newBits++;
            }
        }
        return newBits;
    }

    /** The number of set bits in the AND of two pages of one shape (bits set in both). */
    public static int bitCountAnd(long[] a, long[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException(
                    "pages of different shapes: " + a.length + " and " + b.length + " words");
        }
        int total = 0;
        for (int i = 0; i < a.length; i++) {
            total += Long.bitCount(a[i] & b[i]);
        }
        return total;
    }

    /** The number of set bits in a page. */
    public static int bitCount(long[] words) {
        int total = 0;
        for (long w : words) {
            total += Long.bitCount(w);
        }
        return total;
    }
}
