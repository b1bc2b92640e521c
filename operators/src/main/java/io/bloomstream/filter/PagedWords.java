package io.bloomstream.filter;

/**
 * An array of 64-bit words held in two tiers, so the untouched part of a filter costs nothing:
 *
 * <ul>
 *   <li>Chunks of 1 MiB, allocated when a word in them is first written by {@link #set} or {@link
 *       #setBit} (adds). Chunks are large so that their array headers stay in cache; a flat array
 *       would be about 20% faster on a 124 MB filter but could not be lazy. The table of chunks is
 *       itself allocated with the first chunk.
 *   <li>Blocks of one page each ({@link SparseBlocks}), for pages put in bulk by {@link #orBlock}
 *       (a sparse body being decoded, pages from state, a union) where no chunk is allocated: they
 *       cost in proportion to the pages put, however far apart those are, so a small input never
 *       holds more than a small multiple of its size. A chunk whose blocks cost half as much as the
 *       chunk would becomes a chunk (so it never costs more than twice its blocks did); adds into a
 *       block write in place.
 * </ul>
 *
 * <p>Word indexes are longs, so more than 2^31 bits (2^37 and up) can be addressed. Pages never
 * straddle chunks: a chunk holds a whole number of pages of at most {@link
 * FilterSpec#MAX_PAGE_BITS} bits. Iteration ({@link #nextAllocated}, {@link #bitCount}) costs in
 * proportion to what is allocated, never to the declared length.
 */
final class PagedWords {

    static final int CHUNK_SHIFT = 17;
    static final int CHUNK_WORDS = 1 << CHUNK_SHIFT;
    private static final int CHUNK_MASK = CHUNK_WORDS - 1;

    /**
     * Heap bytes a block costs besides its words: its array header and its share of the hash table
     * (12-byte slots, at most 3/4 full).
     */
    private static final int BLOCK_OVERHEAD = 16 + 24;

    private final long words;
    private final int chunkCount;
    private final int blockWords; // 0: no block tier (a classic filter: one page)
    private final int blockShift;
    private long[][] chunks; // null until the first chunk
    private SparseBlocks sparse; // null until the first block

    /** Words without a block tier: everything lives in chunks. */
    PagedWords(long words) {
        this(words, 0);
    }

    /**
     * Words whose pages of {@code blockWords} words (a power of two up to a chunk) can be held on
     * their own; 0 for none.
     */
    PagedWords(long words, int blockWords) {
        if (words < 1) {
            throw new IllegalArgumentException("words must be >= 1, was " + words);
        }
        if (blockWords != 0 && (Integer.bitCount(blockWords) != 1 || blockWords > CHUNK_WORDS)) {
            throw new IllegalArgumentException(
                    "blockWords must be 0 or a power of two <= "
                            + CHUNK_WORDS
                            + ", was "
                            + blockWords);
        }
        this.words = words;
        this.chunkCount = (int) ((words + CHUNK_WORDS - 1) >>> CHUNK_SHIFT);
        this.blockWords = blockWords;
        this.blockShift = Integer.numberOfTrailingZeros(blockWords);
    }

    /**
     * The words of a filter of {@code spec} with {@code bitsPerCell} bits a cell, with one block a
     * page unless the layout is classic.
     */
    static PagedWords forSpec(FilterSpec spec, int bitsPerCell) {
        long n = spec.words(bitsPerCell);
        return spec.isClassic()
                ? new PagedWords(n)
                : new PagedWords(n, spec.pageWords(bitsPerCell));
    }

    long words() {
        return words;
    }

    /** The words of a block ({@link #orBlock}); 0 if this has no block tier. */
    int blockWords() {
        return blockWords;
    }

    private long[] chunk(long index) {
        long[][] t = chunks;
        return t == null ? null : t[(int) (index >>> CHUNK_SHIFT)];
    }

    private long[] block(long index) {
        return sparse == null ? null : sparse.get(index >>> blockShift);
    }

    long get(long index) {
        long[][] t = chunks;
        if (t != null) {
            long[] chunk = t[(int) (index >>> CHUNK_SHIFT)];
            if (chunk != null) {
                return chunk[(int) index & CHUNK_MASK];
            }
        }
        if (sparse != null) {
            long[] block = sparse.get(index >>> blockShift);
            if (block != null) {
                return block[(int) index & (blockWords - 1)];
            }
        }
        return 0;
    }

    void set(long index, long value) {
        long[] chunk = chunk(index);
        if (chunk == null) {
            long[] block = block(index);
            if (block != null) {
                block[(int) index & (blockWords - 1)] = value;
                return;
            }
            if (value == 0) {
                return;
            }
            chunk = allocate((int) (index >>> CHUNK_SHIFT));
        }
        chunk[(int) index & CHUNK_MASK] = value;
    }

    /** Sets bit {@code bit} (0..63) of word {@code index}; returns whether it was clear. */
    boolean setBit(long index, int bit) {
        long mask = 1L << bit;
        long[] chunk = chunk(index);
        int i = (int) index & CHUNK_MASK;
        if (chunk == null) {
            long[] block = block(index);
            if (block != null) {
                int j = (int) index & (blockWords - 1);
                boolean clear = (block[j] & mask) == 0;
                block[j] |= mask;
                return clear;
            }
            chunk = allocate((int) (index >>> CHUNK_SHIFT));
        } else if ((chunk[i] & mask) != 0) {
            return false;
        }
        chunk[i] |= mask;
        return true;
    }

    /**
     * Allocates every chunk now (a filter that is used densely: no lazy allocation, one array
     * access per word) and returns the chunk table; chunks are never replaced once allocated.
     */
    long[][] allocateAll() {
        for (int c = 0; c < chunkCount; c++) {
            if (chunks == null || chunks[c] == null) {
                allocate(c);
            }
        }
        return chunks;
    }

    /** The chunk table if every chunk is allocated, else null. */
    long[][] allChunks() {
        long[][] t = chunks;
        if (t == null) {
            return null;
        }
        for (long[] chunk : t) {
            if (chunk == null) {
                return null;
            }
        }
        return t;
    }

    /** Allocates chunk {@code c}, moving its blocks (if any) into it. */
    private long[] allocate(int c) {
        if (chunks == null) {
            chunks = new long[chunkCount][];
        }
        long start = (long) c << CHUNK_SHIFT;
        long[] chunk = new long[(int) Math.min(CHUNK_WORDS, words - start)];
        if (sparse != null) {
            sparse.moveChunk(c, chunk);
        }
        chunks[c] = chunk;
        return chunk;
    }

    /**
     * ORs the {@link #blockWords()} words of {@code src} from {@code from} into block {@code block}
     * (the words from {@code block * blockWords()}): into its chunk if that is allocated, else into
     * a block of its own, so that putting pages far apart costs no more than the pages. An all-zero
     * source changes nothing and allocates nothing.
     *
     * @throws IllegalStateException if this has no block tier
     */
    void orBlock(long block, long[] src, int from) {
        if (blockWords == 0) {
            throw new IllegalStateException("no block tier: a classic filter");
        }
        long index = block << blockShift;
        long[] chunk = chunk(index);
        if (chunk != null) {
            int offset = (int) index & CHUNK_MASK;
            for (int i = 0; i < blockWords; i++) {
                chunk[offset + i] |= src[from + i];
            }
            return;
        }
        boolean zero = true;
        for (int i = 0; i < blockWords && zero; i++) {
            zero = src[from + i] == 0;
        }
        if (zero) {
            return;
        }
        if (sparse == null) {
            sparse = new SparseBlocks(blockWords, 1);
        }
        long[] dst = sparse.getOrAdd(block);
        for (int i = 0; i < blockWords; i++) {
            dst[i] |= src[from + i];
        }
        // Once the chunk's blocks cost half of what the chunk would, the chunk is cheaper.
        int c = (int) (index >>> CHUNK_SHIFT);
        long chunkBytes = 8 * Math.min(CHUNK_WORDS, words - ((long) c << CHUNK_SHIFT));
        if (2L * sparse.blocksInChunk(c) * (8L * blockWords + BLOCK_OVERHEAD) >= chunkBytes) {
            allocate(c);
        }
    }

    /**
     * The first word at or after {@code from} that lies in allocated storage (a chunk or a block),
     * or -1 if there is none: words outside it are zero. Successive calls with increasing {@code
     * from} cost in proportion to the allocated storage and the chunk table, not to the words.
     */
    long nextAllocated(long from) {
        if (from < 0 || from >= words) {
            return -1;
        }
        long candidate = -1;
        if (sparse != null && sparse.size() > 0) {
            long key = sparse.ceilingKey(from >>> blockShift);
            if (key >= 0) {
                candidate = Math.max(from, key << blockShift);
            }
        }
        if (chunks != null) {
            int last = candidate < 0 ? chunkCount - 1 : (int) (candidate >>> CHUNK_SHIFT);
            for (int c = (int) (from >>> CHUNK_SHIFT); c <= last; c++) {
                if (chunks[c] != null) {
                    return Math.max(from, (long) c << CHUNK_SHIFT);
                }
            }
        }
        return candidate;
    }

    /**
     * The end (exclusive) of the allocated region holding word {@code index} as {@link
     * #nextAllocated} returned it: the end of its chunk or block.
     */
    long regionEnd(long index) {
        if (chunk(index) != null || blockWords == 0) {
            return Math.min(words, ((index >>> CHUNK_SHIFT) + 1) << CHUNK_SHIFT);
        }
        return Math.min(words, ((index >>> blockShift) + 1) << blockShift);
    }

    /**
     * The first page of {@code pageWords} words (a power of two, or all the words) at or after page
     * {@code fromPage} that has a bit set, or -1; see {@link #nextAllocated}.
     */
    long nextNonEmptyPage(long fromPage, long pageWords) {
        long p = fromPage;
        while (p * pageWords < words) {
            long w = nextAllocated(p * pageWords);
            if (w < 0) {
                return -1;
            }
            long end = regionEnd(w);
            for (p = w / pageWords; p * pageWords < end; p++) {
                if (!isZero(p * pageWords, pageWords)) {
                    return p;
                }
            }
        }
        return -1;
    }

    /** Heap bytes held by chunks and blocks. */
    long allocatedBytes() {
        long total = sparse == null ? 0 : sparse.allocatedBytes();
        if (chunks != null) {
            total += 8L * chunks.length;
            for (long[] chunk : chunks) {
                if (chunk != null) {
                    total += (long) chunk.length * Long.BYTES;
                }
            }
        }
        return total;
    }

    /** The number of set bits over all words. */
    long bitCount() {
        long total = sparse == null ? 0 : sparse.bitCount();
        if (chunks != null) {
            for (long[] chunk : chunks) {
                if (chunk != null) {
                    for (long w : chunk) {
                        total += Long.bitCount(w);
                    }
                }
            }
        }
        return total;
    }

    /** Whether words [from, from + count) are all zero. */
    boolean isZero(long from, long count) {
        for (long i = from; i < from + count; i++) {
            if (get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * ORs {@code other}, which must have the same length and block size, into this: its chunks into
     * chunks, its blocks through {@link #orBlock}.
     */
    void or(PagedWords other) {
        if (other.words != words || other.blockWords != blockWords) {
            throw new IllegalArgumentException(
                    "words of another shape: "
                            + other.words
                            + "/"
                            + other.blockWords
                            + " vs "
                            + words
                            + "/"
                            + blockWords);
        }
        if (other.chunks != null) {
            for (int c = 0; c < chunkCount; c++) {
                long[] src = other.chunks[c];
                if (src == null) {
                    continue;
                }
                long[] dst = chunk((long) c << CHUNK_SHIFT);
                if (dst == null) {
                    dst = allocate(c);
                }
                for (int i = 0; i < src.length; i++) {
                    dst[i] |= src[i];
                }
            }
        }
        if (other.sparse != null) {
            other.sparse.forEach((key, block) -> orBlock(key, block, 0));
        }
    }

    PagedWords copy() {
        PagedWords copy = new PagedWords(words, blockWords);
        if (chunks != null) {
            copy.chunks = new long[chunkCount][];
            for (int c = 0; c < chunkCount; c++) {
                if (chunks[c] != null) {
                    copy.chunks[c] = chunks[c].clone();
                }
            }
        }
        if (sparse != null) {
            copy.sparse = sparse.copy();
        }
        return copy;
    }
}
