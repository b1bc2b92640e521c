package io.bloomstream.filter;

/**
 * Counters on one page held as its own {@code long[]}: the counting layout of the SQL accumulator
 * (what {@link Pages} is to bits). A page of a filter whose pages have {@code b = }{@link
 * Pages#words(FilterSpec)} words of bits holds one counter per bit position in {@code b * width}
 * words: the width in bits of every counter of the page is the array's length over {@code b}, one
 * of {@value #MIN_WIDTH}, 8 and {@value #MAX_WIDTH}.
 *
 * <p><b>Width from the data.</b> A page starts with {@value #MIN_WIDTH}-bit counters; a counter
 * that would pass its width's maximum widens its whole page (4 to 8, 8 to 16 bits), so only the
 * pages of heavily repeated values grow. A {@value #MAX_WIDTH}-bit counter at {@value #STICKY} is
 * sticky: it never changes again, so the position stays set (an estimate may count one item too
 * many there, never one too few).
 */
public final class CounterPages {

    /** The width of a new page's counters, in bits. */
    public static final int MIN_WIDTH = 4;

    /** The widest counters, in bits. */
    public static final int MAX_WIDTH = 16;

    /** The value at which a {@value #MAX_WIDTH}-bit counter sticks. */
    public static final int STICKY = (1 << MAX_WIDTH) - 1;

    private CounterPages() {}

    /** A page of {@value #MIN_WIDTH}-bit counters, all zero, for {@code spec}. */
    public static long[] empty(FilterSpec spec) {
        return new long[Pages.words(spec) * MIN_WIDTH];
    }

    /** The width in bits of the counters of {@code words}, a page of {@code spec}. */
    public static int width(FilterSpec spec, long[] words) {
        int b = Pages.words(spec);
        int width = words.length / b;
        if (words.length % b != 0 || (width != 4 && width != 8 && width != 16)) {
            throw new IllegalArgumentException(
                    "a counter page of "
                            + words.length
                            + " words does not fit a filter of "
                            + b
                            + " words a page");
        }
        return width;
    }

    /** The counter at {@code cell} of a page of {@code width}-bit counters. */
    public static int get(long[] words, int width, long cell) {
        long bit = cell * width;
        return (int) ((words[(int) (bit >>> 6)] >>> (bit & 63)) & ((1L << width) - 1));
    }

    /** Sets the counter at {@code cell} (a value that fits {@code width}). */
    public static void set(long[] words, int width, long cell, int value) {
        long bit = cell * width;
        int w = (int) (bit >>> 6);
        int shift = (int) (bit & 63);
        long mask = ((1L << width) - 1) << shift;
        words[w] = (words[w] & ~mask) | (((long) value << shift) & mask);
    }

    /** The largest value of a {@code width}-bit counter. */
    public static int max(int width) {
        return (1 << width) - 1;
    }

    /** The page with counters twice as wide, same values. */
    public static long[] widen(long[] words, int width) {
        long[] wider = new long[words.length * 2];
        long cells = (long) words.length * 64 / width;
        for (long c = 0; c < cells; c++) {
            int v = get(words, width, c);
            if (v != 0) {
                set(wider, width * 2, c, v);
            }
        }
        return wider;
    }

    /** Whether every counter of the page is zero. */
    public static boolean isEmpty(long[] words) {
        for (long w : words) {
            if (w != 0) {
                return false;
            }
        }
        return true;
    }
}
