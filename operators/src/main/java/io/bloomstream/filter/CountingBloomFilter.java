package io.bloomstream.filter;

import java.util.Objects;

/**
 * A counting Bloom filter (Fan, Cao, Almeida and Broder, "Summary cache", 2000) with 4-bit
 * saturating counters in the paged layout of its {@link FilterSpec}: m counters, 4m bits of memory.
 * It supports {@link #remove}.
 *
 * <p>Saturation: a counter stops at {@value #MAX_COUNT} and is never decremented again, so every
 * counter is at least the number of added items that hit it, or saturated. Hence removing an item
 * that was added can never make another added item test absent. Removing an item that was never
 * added is refused when the filter can tell (one of its counters is zero); when it cannot (a false
 * positive), the removal corrupts the counts like any counting filter: remove only what you added.
 * Not thread-safe.
 */
public final class CountingBloomFilter implements MembershipFilter {

    /** The largest counter value; a counter that reaches it is saturated. */
    public static final int MAX_COUNT = 15;

    private final FilterSpec spec;
    private final PagedWords words;
    private final long[] scratch;
    private long itemsAdded;

    private CountingBloomFilter(FilterSpec spec, PagedWords words, long itemsAdded) {
        this.spec = spec;
        this.scratch = new long[spec.hashes()];
        this.words = words;
        this.itemsAdded = itemsAdded;
    }

    /** An empty counting filter for n expected items at false-positive rate p. */
    public static CountingBloomFilter create(long expectedItems, double fpp) {
        return create(FilterSpec.forItems(expectedItems, fpp));
    }

    /** An empty counting filter of the given shape (m counters). */
    public static CountingBloomFilter create(FilterSpec spec) {
        Objects.requireNonNull(spec, "spec");
        return new CountingBloomFilter(spec, PagedWords.forSpec(spec, BITS_PER_COUNTER), 0);
    }

    /** Bits of one counter. */
    static final int BITS_PER_COUNTER = 4;

    static CountingBloomFilter restore(FilterSpec spec, PagedWords words, long itemsAdded) {
        return new CountingBloomFilter(spec, words, itemsAdded);
    }

    /** The shape. */
    public FilterSpec spec() {
        return spec;
    }

    @Override
    public Hasher hasher() {
        return spec.hasher();
    }

    /** Adds minus successful removes (saturating arithmetic aside). */
    @Override
    public long itemsAdded() {
        return itemsAdded;
    }

    private int counter(long cell) {
        return (int) (words.get(cell >>> 4) >>> ((cell & 15) << 2)) & 0xF;
    }

    private void setCounter(long cell, int value) {
        long index = cell >>> 4;
        int shift = (int) (cell & 15) << 2;
        long w = words.get(index);
        words.set(index, (w & ~(0xFL << shift)) | ((long) value << shift));
    }

    private long base(long h1) {
        return spec.page(h1) * spec.bitsPerPage();
    }

    @Override
    public void add(long h1, long h2) {
        long base = base(h1);
        spec.positions(h1, h2, scratch);
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long cell = base + scratch[i];
            int c = counter(cell);
            if (c < MAX_COUNT) {
                setCounter(cell, c + 1);
            }
        }
        itemsAdded++;
    }

    @Override
    public boolean mightContain(long h1, long h2) {
        return mightContain(h1, h2, scratch);
    }

    /** {@link #mightContain(long, long)} with the caller's scratch of at least k positions. */
    boolean mightContain(long h1, long h2, long[] pos) {
        long base = base(h1);
        spec.positions(h1, h2, pos);
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            if (counter(base + pos[i]) == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean addIfAbsent(long h1, long h2) {
        if (mightContain(h1, h2)) {
            return false;
        }
        add(h1, h2);
        return true;
    }

    /**
     * Removes one occurrence of the item with this hash. Saturated counters stay saturated.
     *
     * @return false, changing nothing, if the item is certainly absent (a counter is zero)
     */
    public boolean remove(long h1, long h2) {
        if (!mightContain(h1, h2)) {
            return false;
        }
        long base = base(h1);
        spec.positions(h1, h2, scratch);
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long cell = base + scratch[i];
            int c = counter(cell);
            if (c > 0 && c < MAX_COUNT) {
                setCounter(cell, c - 1);
            }
        }
        itemsAdded = Math.max(0, itemsAdded - 1);
        return true;
    }

    /** See {@link #remove(long, long)}. */
    public boolean remove(Hash128 hash) {
        return remove(hash.h1(), hash.h2());
    }

    /** See {@link #remove(long, long)}. */
    public boolean remove(String item) {
        return remove(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** See {@link #remove(long, long)}. */
    public boolean remove(byte[] item) {
        return remove(hasher().hash(Objects.requireNonNull(item, "item")));
    }

    /** See {@link #remove(long, long)}. */
    public boolean remove(long item) {
        return remove(hasher().hash(item));
    }

    @Override
    public double expectedFpp() {
        return spec.expectedFpp(itemsAdded());
    }

    /** The number of non-zero counters (reading only the storage the filter holds). */
    public long nonZeroCounters() {
        long total = 0;
        for (long i = words.nextAllocated(0); i >= 0; i = words.nextAllocated(i)) {
            for (long end = words.regionEnd(i); i < end; i++) {
                long w = words.get(i);
                // one bit per non-zero counter
                long nz = (w | (w >>> 1) | (w >>> 2) | (w >>> 3)) & 0x1111111111111111L;
                total += Long.bitCount(nz);
            }
        }
        return total;
    }

    /** The number of saturated counters (reading only the storage the filter holds). */
    public long saturatedCounters() {
        long total = 0;
        for (long i = words.nextAllocated(0); i >= 0; i = words.nextAllocated(i)) {
            for (long end = words.regionEnd(i); i < end; i++) {
                long w = words.get(i);
                long full = w & (w >>> 1) & (w >>> 2) & (w >>> 3) & 0x1111111111111111L;
                total += Long.bitCount(full);
            }
        }
        return total;
    }

    @Override
    public Estimate estimate() {
        return Estimate.of(nonZeroCounters(), spec);
    }

    /**
     * A plain Bloom filter with a bit set wherever a counter is non-zero. It reads only the storage
     * this filter holds, page by page, and holds pages far apart on their own.
     */
    public BloomFilter toBloomFilter() {
        BloomFilter bloom = BloomFilter.create(spec);
        PagedWords bits = bloom.words();
        if (spec.isClassic()) {
            for (long i = words.nextAllocated(0); i >= 0; i = words.nextAllocated(i)) {
                for (long end = words.regionEnd(i); i < end; i++) {
                    long w = words.get(i);
                    for (int c = 0; c < 16 && w != 0; c++, w >>>= 4) {
                        if ((w & 0xF) != 0) {
                            long cell = i * 16 + c;
                            bits.setBit(cell >>> 6, (int) cell & 63);
                        }
                    }
                }
            }
        } else {
            int counterWords = spec.pageWords(BITS_PER_COUNTER);
            long[] page = new long[spec.pageWords(1)];
            for (long p = words.nextNonEmptyPage(0, counterWords);
                    p >= 0;
                    p = words.nextNonEmptyPage(p + 1, counterWords)) {
                java.util.Arrays.fill(page, 0);
                long from = p * counterWords;
                for (int i = 0; i < counterWords; i++) {
                    long w = words.get(from + i);
                    for (int c = 0; c < 16 && w != 0; c++, w >>>= 4) {
                        if ((w & 0xF) != 0) {
                            int cell = i * 16 + c;
                            page[cell >>> 6] |= 1L << cell;
                        }
                    }
                }
                bits.orBlock(p, page, 0);
            }
        }
        return BloomFilter.restore(spec, bits, itemsAdded);
    }

    PagedWords words() {
        return words;
    }

    /** Heap bytes held by the counters now. */
    public long allocatedBytes() {
        return words.allocatedBytes();
    }

    @Override
    public String toString() {
        return "CountingBloomFilter{" + spec + ", itemsAdded=" + itemsAdded + "}";
    }
}
