package io.bloomstream.filter;

import java.util.Arrays;

/**
 * The sparse tier of {@link PagedWords}: blocks of a fixed number of words (a page) keyed by block
 * index, in an open-addressing hash table (linear probing, Fibonacci hashing), with a count of
 * blocks per 1 MiB chunk so {@link PagedWords} can tell when a chunk is worth allocating whole.
 * Memory is proportional to the blocks held, however far apart their indexes are.
 *
 * <p>A block is removed only when its whole chunk is (the chunk became an array of its own): its
 * slot keeps the key with a null block, so probe chains stay intact, until the next rehash drops
 * it.
 */
final class SparseBlocks {

    private static final long FREE = -1;
    private static final int MIN_CAPACITY = 16;

    private final int blockWords;
    private final int blocksPerChunkShift;

    private long[] keys;
    private long[][] blocks;
    private int used; // slots with a key (live or removed)
    private int live; // slots with a block

    private long[] chunkKeys;
    private int[] chunkCounts;
    private int chunksUsed;

    private long[] sorted; // live keys ascending; null when stale

    SparseBlocks(int blockWords, int expectedBlocks) {
        if (Integer.bitCount(blockWords) != 1 || blockWords > PagedWords.CHUNK_WORDS) {
            throw new IllegalArgumentException(
                    "blockWords must be a power of two <= "
                            + PagedWords.CHUNK_WORDS
                            + ", was "
                            + blockWords);
        }
        this.blockWords = blockWords;
        this.blocksPerChunkShift =
                PagedWords.CHUNK_SHIFT - Integer.numberOfTrailingZeros(blockWords);
        int capacity = capacityFor(expectedBlocks);
        keys = freeKeys(capacity);
        blocks = new long[capacity][];
        chunkKeys = freeKeys(MIN_CAPACITY);
        chunkCounts = new int[MIN_CAPACITY];
    }

    private SparseBlocks(SparseBlocks from) {
        this.blockWords = from.blockWords;
        this.blocksPerChunkShift = from.blocksPerChunkShift;
        this.keys = from.keys.clone();
        this.blocks = new long[from.blocks.length][];
        for (int i = 0; i < blocks.length; i++) {
            if (from.blocks[i] != null) {
                blocks[i] = from.blocks[i].clone();
            }
        }
        this.used = from.used;
        this.live = from.live;
        this.chunkKeys = from.chunkKeys.clone();
        this.chunkCounts = from.chunkCounts.clone();
        this.chunksUsed = from.chunksUsed;
        this.sorted = from.sorted;
    }

    /** The smallest power-of-two table that holds {@code n} keys at most 3/4 full. */
    private static int capacityFor(int n) {
        long wanted = Math.max(MIN_CAPACITY, (4L * n + 2) / 3);
        if (wanted > 1 << 30) {
            throw new IllegalStateException("more than 2^29 sparse blocks: " + n);
        }
        return Integer.highestOneBit((int) wanted - 1) << 1;
    }

    private static long[] freeKeys(int capacity) {
        long[] k = new long[capacity];
        Arrays.fill(k, FREE);
        return k;
    }

    private static int slot(long key, long[] table) {
        int shift = 64 - Integer.numberOfTrailingZeros(table.length);
        int mask = table.length - 1;
        int i = (int) ((key * FilterSpec.GOLDEN_GAMMA) >>> shift) & mask;
        while (table[i] != FREE && table[i] != key) {
            i = (i + 1) & mask;
        }
        return i;
    }

    int blockWords() {
        return blockWords;
    }

    /** The number of blocks held. */
    int size() {
        return live;
    }

    /** Block {@code key}, or null. */
    long[] get(long key) {
        return blocks[slot(key, keys)];
    }

    /** Block {@code key}, added (all zero) if absent. */
    long[] getOrAdd(long key) {
        int i = slot(key, keys);
        long[] block = blocks[i];
        if (block != null) {
            return block;
        }
        if (keys[i] == FREE) {
            if (used + 1 > keys.length - (keys.length >>> 2)) {
                rehash(capacityFor(live + 1));
                i = slot(key, keys);
            }
            used++;
        }
        keys[i] = key;
        block = new long[blockWords];
        blocks[i] = block;
        live++;
        sorted = null;
        int c = chunkSlot(key >>> blocksPerChunkShift, true);
        chunkCounts[c]++;
        return block;
    }

    /** The blocks held in chunk {@code chunk}. */
    int blocksInChunk(long chunk) {
        int c = chunkSlot(chunk, false);
        return chunkKeys[c] == FREE ? 0 : chunkCounts[c];
    }

    /**
     * Copies every block of chunk {@code chunk} into {@code into} (the chunk's words, from its
     * first) and removes them.
     */
    void moveChunk(long chunk, long[] into) {
        int c = chunkSlot(chunk, false);
        if (chunkKeys[c] == FREE || chunkCounts[c] == 0) {
            return;
        }
        long first = chunk << blocksPerChunkShift;
        long end = first + (1L << blocksPerChunkShift);
        int remaining = chunkCounts[c];
        if (keys.length <= end - first) {
            for (int i = 0; i < keys.length && remaining > 0; i++) {
                if (blocks[i] != null && keys[i] >= first && keys[i] < end) {
                    take(i, first, into);
                    remaining--;
                }
            }
        } else {
            // A table larger than the chunk: probe the chunk's block indexes instead.
            for (long key = first; key < end && remaining > 0; key++) {
                int i = slot(key, keys);
                if (blocks[i] != null) {
                    take(i, first, into);
                    remaining--;
                }
            }
        }
        chunkCounts[c] = 0;
        sorted = null;
        if (used - live > live && used > MIN_CAPACITY) {
            rehash(capacityFor(live));
        }
    }

    private void take(int i, long first, long[] into) {
        int offset = (int) (keys[i] - first) * blockWords;
        System.arraycopy(blocks[i], 0, into, offset, Math.min(blockWords, into.length - offset));
        blocks[i] = null;
        live--;
    }

    private int chunkSlot(long chunk, boolean add) {
        int i = slot(chunk, chunkKeys);
        if (add && chunkKeys[i] == FREE) {
            if (chunksUsed + 1 > chunkKeys.length - (chunkKeys.length >>> 2)) {
                growChunks();
                i = slot(chunk, chunkKeys);
            }
            chunkKeys[i] = chunk;
            chunksUsed++;
        }
        return i;
    }

    private void growChunks() {
        long[] oldKeys = chunkKeys;
        int[] oldCounts = chunkCounts;
        chunkKeys = freeKeys(oldKeys.length * 2);
        chunkCounts = new int[oldKeys.length * 2];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != FREE) {
                int j = slot(oldKeys[i], chunkKeys);
                chunkKeys[j] = oldKeys[i];
                chunkCounts[j] = oldCounts[i];
            }
        }
    }

    private void rehash(int capacity) {
        long[] oldKeys = keys;
        long[][] oldBlocks = blocks;
        keys = freeKeys(capacity);
        blocks = new long[capacity][];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldBlocks[i] != null) {
                int j = slot(oldKeys[i], keys);
                keys[j] = oldKeys[i];
                blocks[j] = oldBlocks[i];
            }
        }
        used = live;
    }

    /** The smallest key held that is at least {@code key}, or -1. */
    long ceilingKey(long key) {
        long[] s = sortedKeys();
        int i = Arrays.binarySearch(s, key);
        if (i < 0) {
            i = -i - 1;
        }
        return i < s.length ? s[i] : -1;
    }

    private long[] sortedKeys() {
        if (sorted == null) {
            long[] s = new long[live];
            int n = 0;
            for (int i = 0; i < keys.length; i++) {
                if (blocks[i] != null) {
                    s[n++] = keys[i];
                }
            }
            Arrays.sort(s);
            sorted = s;
        }
        return sorted;
    }

    /** The number of set bits over all blocks. */
    long bitCount() {
        long total = 0;
        for (long[] block : blocks) {
            if (block != null) {
                for (long w : block) {
                    total += Long.bitCount(w);
                }
            }
        }
        return total;
    }

    /** Heap bytes held: the blocks and the tables. */
    long allocatedBytes() {
        return (long) live * (16 + 8L * blockWords)
                + 12L * keys.length
                + 12L * chunkKeys.length
                + 8L * (sorted == null ? 0 : sorted.length);
    }

    /** Calls {@code visitor} with each block's key and words, in no particular order. */
    void forEach(BlockVisitor visitor) {
        for (int i = 0; i < keys.length; i++) {
            if (blocks[i] != null) {
                visitor.visit(keys[i], blocks[i]);
            }
        }
    }

    /** A deep copy. */
    SparseBlocks copy() {
        return new SparseBlocks(this);
    }

    /** Receives the blocks of {@link #forEach}. */
    interface BlockVisitor {
        void visit(long key, long[] words);
    }
}
