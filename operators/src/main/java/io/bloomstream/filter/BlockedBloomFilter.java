package io.bloomstream.filter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A Bloom filter of 512-bit pages (one 64-byte cache line each) over one 64-bit hash per item
 * ({@link HashStrategy#XXH3_64}): the fast path for a filter held in memory. It sets exactly the
 * bits that a {@link BloomFilter} of the same {@link FilterSpec} sets ({@link #toBloomFilter()}
 * converts, for the codec), but is laid out flat instead of lazily, computes positions inline and
 * allocates nothing per call.
 *
 * <p>Two storages: {@link #create(FilterSpec)} keeps the bits in a {@code long[]} on the heap,
 * whose body starts 16 bytes into the object, so a page usually straddles two cache lines; {@link
 * #createAligned(FilterSpec)} keeps them in a direct buffer aligned to 64 bytes ({@link
 * ByteBuffer#alignedSlice}), the only portable way to align memory in Java 17, so each page is
 * exactly one line. The aligned storage is off-heap (it counts against {@code
 * -XX:MaxDirectMemorySize} and is freed when the filter is collected).
 *
 * <p>The batch methods take arrays of hashes, locate all pages of a chunk first and probe them
 * second, without data-dependent branches between items, so the cache misses of a large filter
 * overlap instead of following one another.
 *
 * <p>Not thread-safe. At most 2^25 - 1 pages (2^34 bits) aligned and 2^28 - 1 pages on the heap.
 */
public abstract sealed class BlockedBloomFilter implements MembershipFilter
        permits BlockedBloomFilter.Heap, BlockedBloomFilter.Aligned {

    /** The page size of this filter: 512 bits. */
    public static final int PAGE_BITS = 512;

    /** Items per chunk of the batch methods: enough misses in flight, all pages still in L1. */
    static final int BATCH = 32;

    private static final long GAMMA = FilterSpec.GOLDEN_GAMMA;

    private final FilterSpec spec;
    private final Hasher hasher;
    private final long pages;
    private final int hashes;
    private final int[] bases = new int[BATCH];
    private long itemsAdded;

    /** Written by the batch methods' locate pass, so the JIT keeps its loads. */
    long sink;

    private BlockedBloomFilter(FilterSpec spec) {
        this.spec = spec;
        this.hasher = spec.hasher();
        this.pages = spec.pages();
        this.hashes = spec.hashes();
    }

    /**
     * A heap filter for n expected items at rate p, hashed by {@link Hasher#xxh3_64} (default
     * seed).
     */
    public static BlockedBloomFilter create(long expectedItems, double fpp) {
        return create(specFor(expectedItems, fpp));
    }

    /**
     * The spec of this layout for n items at rate p: 512-bit pages, {@link Hasher#xxh3_64} with
     * {@link Hasher#DEFAULT_SEED}.
     */
    public static FilterSpec specFor(long expectedItems, double fpp) {
        return FilterSpec.builder()
                .expectedItems(expectedItems)
                .fpp(fpp)
                .pageBits(PAGE_BITS)
                .hasher(Hasher.xxh3_64(Hasher.DEFAULT_SEED))
                .build();
    }

    /**
     * An empty filter of the given shape with its bits in a {@code long[]}.
     *
     * @throws IllegalArgumentException unless the spec has 512-bit pages and a 64-bit hasher, or if
     *     it has too many pages
     */
    public static BlockedBloomFilter create(FilterSpec spec) {
        check(spec, (Integer.MAX_VALUE - 8) / 8);
        return new Heap(spec);
    }

    /**
     * An empty filter of the given shape with its bits off-heap, each page on one 64-byte line.
     *
     * @throws IllegalArgumentException unless the spec has 512-bit pages and a 64-bit hasher, or if
     *     it has too many pages
     */
    public static BlockedBloomFilter createAligned(FilterSpec spec) {
        check(spec, (Integer.MAX_VALUE - 64) / 64);
        return new Aligned(spec);
    }

    private static void check(FilterSpec spec, long maxPages) {
        Objects.requireNonNull(spec, "spec");
        if (spec.pageBits() != PAGE_BITS) {
            throw new IllegalArgumentException(
                    "spec.pageBits must be " + PAGE_BITS + ", was " + spec.pageBits());
        }
        if (!spec.hasher().is64Bit()) {
            throw new IllegalArgumentException(
                    "spec.hasher must give 64-bit hashes (Hasher.xxh3_64), was " + spec.hasher());
        }
        if (spec.pages() > maxPages) {
            throw new IllegalArgumentException(
                    "spec.pages must be at most " + maxPages + ", was " + spec.pages());
        }
    }

    /** The shape. */
    public FilterSpec spec() {
        return spec;
    }

    @Override
    public Hasher hasher() {
        return hasher;
    }

    /** Whether each page sits on one 64-byte cache line (the {@link #createAligned} storage). */
    public abstract boolean isAligned();

    abstract long word(int index);

    abstract void or(int index, long mask);

    abstract int wordCount();

    /** The index of the first word of the page of hash {@code h}. */
    private int base(long h) {
        return (int) (Math.multiplyHigh(h, pages) + ((h >> 63) & pages)) << 3;
    }

    /**
     * Whether the item with 64-bit hash {@code h} might have been added. The k bits are tested
     * without a branch per bit: an early exit mispredicts on half the bits of an absent item.
     */
    public boolean mightContainHash(long h) {
        return probe(base(h), h) != 0;
    }

    /** Adds the item with 64-bit hash {@code h}. */
    public void addHash(long h) {
        addIfAbsentHash(h);
    }

    /**
     * Adds the item with 64-bit hash {@code h} unless all its bits are set already.
     *
     * @return true if a bit was clear (the item was certainly new and is now added)
     */
    public boolean addIfAbsentHash(long h) {
        int base = base(h);
        long x = FilterSpec.mix(h + GAMMA);
        long missing = 0;
        for (int i = 0, f = 0, j = 1; i < hashes; i++, f++) {
            if (f == 7) {
                x = FilterSpec.mix(h + ++j * GAMMA);
                f = 0;
            }
            int bit = (int) (x >>> 55);
            int w = base + (bit >>> 6);
            long mask = 1L << bit;
            missing |= ~word(w) & mask;
            or(w, mask);
            x <<= 9;
        }
        if (missing != 0) {
            itemsAdded++;
            return true;
        }
        return false;
    }

    /** All k bits of {@code h} ANDed, without a branch per bit: 1 if all are set. */
    private long probe(int base, long h) {
        long x = FilterSpec.mix(h + GAMMA);
        long all = 1;
        int k = hashes;
        for (int i = 0; i < Math.min(k, 7); i++) {
            int bit = (int) (x >>> 55);
            all &= word(base + (bit >>> 6)) >>> bit;
            x <<= 9;
        }
        return k <= 7 ? all & 1 : probeRest(base, h, all);
    }

    /** {@link #probe} for positions 7 to k - 1, from the second and later re-mixes. */
    private long probeRest(int base, long h, long all) {
        long x = 0;
        for (int i = 7, f = 7, j = 1; i < hashes; i++, f++) {
            if (f == 7) {
                x = FilterSpec.mix(h + ++j * GAMMA);
                f = 0;
            }
            int bit = (int) (x >>> 55);
            all &= word(base + (bit >>> 6)) >>> bit;
            x <<= 9;
        }
        return all & 1;
    }

    /** Locates the pages of {@code hashes[off, off+n)} (n <= BATCH) and touches each once. */
    private void locate(long[] hashes, int off, int n) {
        long touch = 0;
        for (int i = 0; i < n; i++) {
            int b = base(hashes[off + i]);
            bases[i] = b;
            touch += word(b);
        }
        sink += touch;
    }

    /**
     * Batch {@link #mightContainHash}: {@code results[resultsOff + i]} is whether {@code hashes[off
     * + i]} might have been added, for i in [0, len).
     *
     * @return the number of true results
     */
    public int mightContainHashes(
            long[] hashes, int off, int len, boolean[] results, int resultsOff) {
        Objects.checkFromIndexSize(off, len, hashes.length);
        Objects.checkFromIndexSize(resultsOff, len, results.length);
        int positives = 0;
        for (int start = 0; start < len; start += BATCH) {
            int n = Math.min(BATCH, len - start);
            locate(hashes, off + start, n);
            for (int i = 0; i < n; i++) {
                long hit = probe(bases[i], hashes[off + start + i]);
                results[resultsOff + start + i] = hit != 0;
                positives += (int) hit;
            }
        }
        return positives;
    }

    /** Batch {@link #addHash}: adds {@code hashes[off, off+len)}. */
    public void addHashes(long[] hashes, int off, int len) {
        Objects.checkFromIndexSize(off, len, hashes.length);
        for (int start = 0; start < len; start += BATCH) {
            int n = Math.min(BATCH, len - start);
            locate(hashes, off + start, n);
            for (int i = 0; i < n; i++) {
                addIfAbsentHash(hashes[off + start + i]);
            }
        }
    }

    /**
     * Batch {@link #addIfAbsentHash}, with the answers of adding the items one by one in array
     * order (a repeat within the batch is not new): {@code results[resultsOff + i]} is whether
     * {@code hashes[off + i]} was new.
     *
     * @return the number of new items
     */
    public int addIfAbsentHashes(
            long[] hashes, int off, int len, boolean[] results, int resultsOff) {
        Objects.checkFromIndexSize(off, len, hashes.length);
        Objects.checkFromIndexSize(resultsOff, len, results.length);
        int added = 0;
        for (int start = 0; start < len; start += BATCH) {
            int n = Math.min(BATCH, len - start);
            locate(hashes, off + start, n);
            for (int i = 0; i < n; i++) {
                boolean isNew = addIfAbsentHash(hashes[off + start + i]);
                results[resultsOff + start + i] = isNew;
                added += isNew ? 1 : 0;
            }
        }
        return added;
    }

    @Override
    public void add(long h1, long h2) {
        addHash(h1);
    }

    @Override
    public boolean mightContain(long h1, long h2) {
        return mightContainHash(h1);
    }

    @Override
    public boolean addIfAbsent(long h1, long h2) {
        return addIfAbsentHash(h1);
    }

    @Override
    public void add(long item) {
        addHash(hasher.hash64(item));
    }

    @Override
    public boolean mightContain(long item) {
        return mightContainHash(hasher.hash64(item));
    }

    @Override
    public boolean addIfAbsent(long item) {
        return addIfAbsentHash(hasher.hash64(item));
    }

    @Override
    public void add(String item) {
        addHash(hasher.hash64(item));
    }

    @Override
    public boolean mightContain(String item) {
        return mightContainHash(hasher.hash64(item));
    }

    @Override
    public boolean addIfAbsent(String item) {
        return addIfAbsentHash(hasher.hash64(item));
    }

    @Override
    public long itemsAdded() {
        return itemsAdded;
    }

    @Override
    public double expectedFpp() {
        return spec.expectedFpp(itemsAdded);
    }

    /** The number of set bits. */
    public long bitCount() {
        long total = 0;
        for (int i = 0, n = wordCount(); i < n; i++) {
            total += Long.bitCount(word(i));
        }
        return total;
    }

    @Override
    public Estimate estimate() {
        return Estimate.of(bitCount(), spec);
    }

    /** A {@link BloomFilter} with the same spec, bits and count (for example to encode it). */
    public BloomFilter toBloomFilter() {
        PagedWords words = PagedWords.forSpec(spec, 1);
        for (int i = 0, n = wordCount(); i < n; i++) {
            long w = word(i);
            if (w != 0) {
                words.set(i, w);
            }
        }
        return BloomFilter.restore(spec, words, itemsAdded);
    }

    @Override
    public String toString() {
        return "BlockedBloomFilter{"
                + (this instanceof Aligned ? "aligned, " : "heap, ")
                + spec
                + ", itemsAdded="
                + itemsAdded
                + "}";
    }

    /** Bits in a {@code long[]}: page p at words [8p, 8p + 8). */
    static final class Heap extends BlockedBloomFilter {
        private final long[] words;

        Heap(FilterSpec spec) {
            super(spec);
            this.words = new long[Math.toIntExact(spec.pages() * 8)];
        }

        @Override
        public boolean isAligned() {
            return false;
        }

        @Override
        long word(int index) {
            return words[index];
        }

        @Override
        void or(int index, long mask) {
            words[index] |= mask;
        }

        @Override
        int wordCount() {
            return words.length;
        }
    }

    /** Bits in a direct buffer whose first byte is 64-byte aligned: page p on line p. */
    static final class Aligned extends BlockedBloomFilter {
        private final ByteBuffer buffer;
        private final int words;

        Aligned(FilterSpec spec) {
            super(spec);
            int bytes = Math.toIntExact(spec.pages() * 64);
            this.words = bytes / 8;
            this.buffer =
                    ByteBuffer.allocateDirect(bytes + 64)
                            .alignedSlice(64)
                            .limit(bytes)
                            .slice()
                            .order(ByteOrder.nativeOrder());
        }

        @Override
        public boolean isAligned() {
            return buffer.alignmentOffset(0, 64) == 0;
        }

        @Override
        long word(int index) {
            return buffer.getLong(index << 3);
        }

        @Override
        void or(int index, long mask) {
            int at = index << 3;
            buffer.putLong(at, buffer.getLong(at) | mask);
        }

        @Override
        int wordCount() {
            return words;
        }
    }
}
