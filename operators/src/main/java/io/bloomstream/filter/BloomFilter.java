package io.bloomstream.filter;

import java.util.Map;
import java.util.Objects;

/**
 * A Bloom filter in the paged layout of its {@link FilterSpec} (the classic layout when the spec
 * says {@link FilterSpec#CLASSIC}). Storage is allocated lazily: 1 MiB at a time as items are
 * added, page by page for pages read from a file or from state. Not thread-safe.
 *
 * <p>Past its expected items a filter keeps working, but its false-positive rate climbs: see {@link
 * #expectedFpp()}; a {@link ScalableBloomFilter} grows instead.
 */
public final class BloomFilter implements MembershipFilter {

    private final FilterSpec spec;
    private final PagedWords words;
    private final long[] scratch;
    private long itemsAdded;

    private BloomFilter(FilterSpec spec, PagedWords words, long itemsAdded) {
        this.spec = spec;
        this.scratch = new long[spec.hashes()];
        this.words = words;
        this.itemsAdded = itemsAdded;
    }

    /** An empty filter for n expected items at false-positive rate p, with the defaults. */
    public static BloomFilter create(long expectedItems, double fpp) {
        return create(FilterSpec.forItems(expectedItems, fpp));
    }

    /** An empty filter of the given shape. */
    public static BloomFilter create(FilterSpec spec) {
        Objects.requireNonNull(spec, "spec");
        return new BloomFilter(spec, PagedWords.forSpec(spec, 1), 0);
    }

    static BloomFilter restore(FilterSpec spec, PagedWords words, long itemsAdded) {
        return new BloomFilter(spec, words, itemsAdded);
    }

    /**
     * A filter assembled from its pages as paged state holds them (the layout of {@link Pages}):
     * each entry is a page index in [0, pages) and its {@link Pages#words(FilterSpec)} words, ORed
     * into the new filter (an index given twice is ORed twice). Missing pages are empty. Pages far
     * apart are held on their own, so the filter costs in proportion to the pages given, whatever
     * its declared size.
     *
     * @param itemsAdded the items the pages took as new (see {@link #itemsAdded()})
     * @throws IllegalArgumentException if an index is out of range or a page has the wrong length
     */
    public static BloomFilter fromPages(
            FilterSpec spec, long itemsAdded, Iterable<Map.Entry<Long, long[]>> pages) {
        BloomFilter f = create(spec);
        if (itemsAdded < 0) {
            throw new IllegalArgumentException("itemsAdded must be >= 0, was " + itemsAdded);
        }
        f.itemsAdded = itemsAdded;
        int pageWords = Pages.words(spec);
        for (Map.Entry<Long, long[]> e : pages) {
            long page = e.getKey();
            long[] src = e.getValue();
            if (page < 0 || page >= spec.pages()) {
                throw new IllegalArgumentException(
                        "page index must be in [0, " + spec.pages() + "), was " + page);
            }
            if (src.length != pageWords) {
                throw new IllegalArgumentException(
                        "page " + page + " must have " + pageWords + " words, has " + src.length);
            }
            if (f.words.blockWords() == pageWords) {
                f.words.orBlock(page, src, 0);
            } else {
                long from = page * pageWords; // the classic layout: one page
                for (int i = 0; i < pageWords; i++) {
                    if (src[i] != 0) {
                        f.words.set(from + i, f.words.get(from + i) | src[i]);
                    }
                }
            }
        }
        return f;
    }

    /**
     * Copies page {@code page}'s words into {@code into} (at least {@link Pages#words(FilterSpec)}
     * long), the layout {@link Pages} works on.
     *
     * @return whether the page has any bit set
     * @throws IllegalArgumentException if {@code page} is out of range
     */
    public boolean readPage(long page, long[] into) {
        if (page < 0 || page >= spec.pages()) {
            throw new IllegalArgumentException(
                    "page index must be in [0, " + spec.pages() + "), was " + page);
        }
        int pageWords = Pages.words(spec);
        long from = page * pageWords;
        boolean any = false;
        for (int i = 0; i < pageWords; i++) {
            long w = words.get(from + i);
            into[i] = w;
            any |= w != 0;
        }
        return any;
    }

    /** The shape. */
    public FilterSpec spec() {
        return spec;
    }

    @Override
    public Hasher hasher() {
        return spec.hasher();
    }

    /**
     * The number of adds that set at least one new bit: the items the filter took as new. It is at
     * most the true number of distinct items added.
     */
    @Override
    public long itemsAdded() {
        return itemsAdded;
    }

    @Override
    public void add(long h1, long h2) {
        addIfAbsent(h1, h2);
    }

    @Override
    public boolean mightContain(long h1, long h2) {
        return mightContain(h1, h2, scratch);
    }

    /** {@link #mightContain(long, long)} with the caller's scratch of at least k positions. */
    boolean mightContain(long h1, long h2, long[] pos) {
        long base = spec.page(h1) * spec.bitsPerPage();
        spec.positions(h1, h2, pos);
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long bit = base + pos[i];
            if ((words.get(bit >>> 6) & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean addIfAbsent(long h1, long h2) {
        long base = spec.page(h1) * spec.bitsPerPage();
        long[] pos = scratch;
        spec.positions(h1, h2, pos);
        boolean changed = false;
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            long bit = base + pos[i];
            changed |= words.setBit(bit >>> 6, (int) bit & 63);
        }
        if (changed) {
            itemsAdded++;
        }
        return changed;
    }

    /** The number of set bits, X. */
    public long bitCount() {
        return words.bitCount();
    }

    /** X / m. */
    public double fillRatio() {
        return (double) bitCount() / spec.bits();
    }

    /**
     * The false-positive rate now, from the fill: the probability that k positions in a page are
     * all set, estimated as the fill ratio to the power k (exact for the classic layout, a close
     * lower estimate for pages).
     */
    public double currentFpp() {
        return Math.pow(fillRatio(), spec.hashes());
    }

    /** The theoretical rate at {@link #itemsAdded()} items under the layout's model. */
    @Override
    public double expectedFpp() {
        return spec.expectedFpp(itemsAdded);
    }

    @Override
    public Estimate estimate() {
        return Estimate.of(bitCount(), spec);
    }

    /** Heap bytes held by the bit storage now. */
    public long allocatedBytes() {
        return words.allocatedBytes();
    }

    /**
     * The number of pages with at least one bit set. It costs in proportion to the storage the
     * filter holds, not to its declared pages.
     */
    public long nonEmptyPages() {
        if (spec.pages() == 1) {
            return bitCount() == 0 ? 0 : 1;
        }
        long count = 0;
        for (long p = nextNonEmptyPage(0); p >= 0; p = nextNonEmptyPage(p + 1)) {
            count++;
        }
        return count;
    }

    /**
     * The first page at or after {@code from} with a bit set, or -1 if there is none: a walk over
     * the non-empty pages ({@code for (p = f.nextNonEmptyPage(0); p >= 0; p = f.nextNonEmptyPage(p
     * + 1))}) costs in proportion to the storage the filter holds, however many pages it declares.
     */
    public long nextNonEmptyPage(long from) {
        if (from < 0) {
            throw new IllegalArgumentException("from must be >= 0, was " + from);
        }
        if (from >= spec.pages()) {
            return -1;
        }
        return words.nextNonEmptyPage(from, spec.isClassic() ? words.words() : pageWords());
    }

    int pageWords() {
        return spec.pageWords(1);
    }

    PagedWords words() {
        return words;
    }

    /**
     * A new filter holding every item of this one and of {@code other}: the bitwise OR. Its items
     * added are the sum of both, saturating at {@code Long.MAX_VALUE}.
     *
     * @throws IllegalArgumentException if the specs differ (naming the field)
     */
    public BloomFilter union(BloomFilter other) {
        spec.checkCompatible(other.spec);
        PagedWords merged = words.copy();
        merged.or(other.words);
        return new BloomFilter(spec, merged, saturatedAdd(itemsAdded, other.itemsAdded));
    }

    /** {@code a + b} for counts >= 0, or {@code Long.MAX_VALUE} where it would overflow. */
    static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** An independent copy. */
    public BloomFilter copy() {
        return new BloomFilter(spec, words.copy(), itemsAdded);
    }

    @Override
    public String toString() {
        return "BloomFilter{" + spec + ", itemsAdded=" + itemsAdded + "}";
    }
}
