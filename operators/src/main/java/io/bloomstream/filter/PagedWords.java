package io.bloomstream.filter;

/**
 * An array of 64-bit words that is allocated lazily in chunks of 1 MiB, so the untouched part of a
 * filter costs nothing but a null reference. (Chunks are large so that their array headers stay in
 * cache; a flat array would be about 20% faster on a 124 MB filter but could not be lazy.) Word
 * indexes are longs, so more than 2^31 bits (2^37 and up) can be addressed. Pages never straddle
 * chunks: a chunk holds a whole number of pages of at most {@link FilterSpec#MAX_PAGE_BITS} bits.
 */
final class PagedWords {

    static final int CHUNK_SHIFT = 17;
    static final int CHUNK_WORDS = 1 << CHUNK_SHIFT;
    private static final int CHUNK_MASK = CHUNK_WORDS - 1;

    private final long words;
    private final long[][] chunks;

    PagedWords(long words) {
        if (words < 1) {
            throw new IllegalArgumentException("words must be >= 1, was " + words);
        }
        this.words = words;
        long chunkCount = (words + CHUNK_WORDS - 1) >>> CHUNK_SHIFT;
        this.chunks = new long[(int) chunkCount][];
    }

    long words() {
        return words;
    }

    long get(long index) {
        long[] chunk = chunks[(int) (index >>> CHUNK_SHIFT)];
        return chunk == null ? 0 : chunk[(int) index & CHUNK_MASK];
    }

    void set(long index, long value) {
        chunkFor(index)[(int) index & CHUNK_MASK] = value;
    }

    /** Sets bit {@code bit} (0..63) of word {@code index}; returns whether it was clear. */
    boolean setBit(long index, int bit) {
        long mask = 1L << bit;
        long[] chunk = chunks[(int) (index >>> CHUNK_SHIFT)];
        int i = (int) index & CHUNK_MASK;
        if (chunk != null && (chunk[i] & mask) != 0) {
            return false;
        }
        chunkFor(index)[i] |= mask;
        return true;
    }

    private long[] chunkFor(long index) {
        int c = (int) (index >>> CHUNK_SHIFT);
        long[] chunk = chunks[c];
        if (chunk == null) {
            long start = (long) c << CHUNK_SHIFT;
            chunk = new long[(int) Math.min(CHUNK_WORDS, words - start)];
            chunks[c] = chunk;
        }
        return chunk;
    }

    /** Whether the chunk holding word {@code index} was ever allocated. */
    boolean isAllocated(long index) {
        return chunks[(int) (index >>> CHUNK_SHIFT)] != null;
    }

    /** Bytes held by allocated chunks. */
    long allocatedBytes() {
        long total = 0;
        for (long[] chunk : chunks) {
            if (chunk != null) {
                total += (long) chunk.length * Long.BYTES;
            }
        }
        return total;
    }

    /** The number of set bits over all words. */
    long bitCount() {
        long total = 0;
        for (long[] chunk : chunks) {
            if (chunk != null) {
                for (long w : chunk) {
                    total += Long.bitCount(w);
                }
            }
        }
        return total;
    }

    /** Whether words [from, from + count) are all zero. */
    boolean isZero(long from, int count) {
        for (long i = from; i < from + count; i++) {
            if (get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** ORs {@code other}, which must have the same length, into this. */
    void or(PagedWords other) {
        for (int c = 0; c < chunks.length; c++) {
            long[] src = other.chunks[c];
            if (src == null) {
                continue;
            }
            long[] dst = chunkFor((long) c << CHUNK_SHIFT);
            for (int i = 0; i < src.length; i++) {
                dst[i] |= src[i];
            }
        }
    }

    PagedWords copy() {
        PagedWords copy = new PagedWords(words);
        for (int c = 0; c < chunks.length; c++) {
            if (chunks[c] != null) {
                copy.chunks[c] = chunks[c].clone();
            }
        }
        return copy;
    }
}
