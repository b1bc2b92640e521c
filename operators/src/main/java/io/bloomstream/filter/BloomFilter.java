package io.bloomstream.filter;

import java.util.Map;
import java.util.Objects;

/**
 * A Bloom filter in the paged layout of its {@link FilterSpec} (the classic layout when the spec
 * says {@link FilterSpec#CLASSIC}). Not thread-safe.
 *
 * <p>{@link #create(long, double)} makes the fast layout, that of {@link BlockedBloomFilter}:
 * 512-bit pages (one cache line) and one 64-bit hash per item ({@link HashStrategy#XXH3_64}), its
 * storage allocated at once, so a lookup costs one hash, one cache line and no allocation. Filters
 * of any other spec ({@link #create(FilterSpec)}, and filters read from files or state) allocate
 * their storage lazily: 1 MiB at a time as items are added, page by page for pages read from a file
 * or from state.
 *
 * <p>Past its expected items a filter keeps working, but its false-positive rate climbs: see {@link
 * #expectedFpp()}; a {@link ScalableBloomFilter} grows instead.
 */
public final class BloomFilter implements MembershipFilter {

    private final FilterSpec spec;
    private final PagedWords words;
    private final long[] scratch;
    private long itemsAdded;

    /**
     * The chunk table of {@link #words} when the spec is the blocked layout and every chunk is
     * allocated: then the single-item methods probe it directly as {@link BlockedBloomFilter} does
     * (the same bits as the general path). Null otherwise.
     */
    private final long[][] blocked;

    private final long pages;

    private BloomFilter(FilterSpec spec, PagedWords words, long itemsAdded) {
        this.spec = spec;
        this.scratch = new long[spec.hashes()];
        this.words = words;
        this.itemsAdded = itemsAdded;
        this.pages = spec.pages();
        this.blocked = isBlockedLayout(spec) ? words.allChunks() : null;
    }

    /** 512-bit pages probed from one 64-bit hash: the layout of {@link BlockedBloomFilter}. */
    private static boolean isBlockedLayout(FilterSpec spec) {
        return spec.pageBits() == BlockedBloomFilter.PAGE_BITS && spec.hasher().is64Bit();
    }

    /**
     * An empty filter for n expected items at false-positive rate p in the fast layout: {@link
     * BlockedBloomFilter#specFor}'s spec (512-bit pages, {@link Hasher#xxh3_64} with {@link
     * Hasher#DEFAULT_SEED}), its storage allocated now (about 1.24 bytes per item at 1%). Before
     * bloomstream 0.5 this was {@link FilterSpec#forItems}'s spec (XXH3-128, automatic pages),
     * allocated lazily; filters and files of that spec still work and {@link #create(FilterSpec)}
     * still makes them.
     */
    public static BloomFilter create(long expectedItems, double fpp) {
        FilterSpec spec = BlockedBloomFilter.specFor(expectedItems, fpp);
        PagedWords words = PagedWords.forSpec(spec, 1);
        words.allocateAll();
        return new BloomFilter(spec, words, 0);
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
        if (blocked != null) {
            return blockedProbe(h1);
        }
        return mightContain(h1, h2, scratch);
    }

    @Override
    public void add(long item) {
        addIfAbsent(item);
    }

    @Override
    public boolean mightContain(long item) {
        if (blocked != null) {
            return blockedProbe(spec.hasher().hash64(item));
        }
        return MembershipFilter.super.mightContain(item);
    }

    @Override
    public boolean addIfAbsent(long item) {
        if (blocked != null) {
            return blockedAdd(spec.hasher().hash64(item));
        }
        return MembershipFilter.super.addIfAbsent(item);
    }

    @Override
    public void add(String item) {
        addIfAbsent(item);
    }

    @Override
    public boolean mightContain(String item) {
        if (blocked != null) {
            return blockedProbe(spec.hasher().hash64(Objects.requireNonNull(item, "item")));
        }
        return MembershipFilter.super.mightContain(item);
    }

    @Override
    public boolean addIfAbsent(String item) {
        if (blocked != null) {
            return blockedAdd(spec.hasher().hash64(Objects.requireNonNull(item, "item")));
        }
        return MembershipFilter.super.addIfAbsent(item);
    }

    /** The first word of the page of 64-bit hash {@code h} ({@link FilterSpec#page}, times 8). */
    private long blockedBase(long h) {
        return (Math.multiplyHigh(h, pages) + ((h >> 63) & pages)) << 3;
    }

    /**
     * {@link #mightContain(long, long)} in the blocked layout: the k positions of {@link
     * FilterSpec#positions64} (9-bit fields of SplitMix64 re-mixes of h), ANDed without a branch
     * per bit as {@link BlockedBloomFilter} does.
     */
    private boolean blockedProbe(long h) {
        long base = blockedBase(h);
        long[] chunk = blocked[(int) (base >>> PagedWords.CHUNK_SHIFT)];
        int b = (int) base & (PagedWords.CHUNK_WORDS - 1);
        long all = 1;
        long x = FilterSpec.mix(h + FilterSpec.GOLDEN_GAMMA);
        for (int i = 0, f = 0, j = 1, k = scratch.length; i < k; i++, f++) {
            if (f == 7) {
                x = FilterSpec.mix(h + ++j * FilterSpec.GOLDEN_GAMMA);
                f = 0;
            }
            int bit = (int) (x >>> 55);
            all &= chunk[b + (bit >>> 6)] >>> bit;
            x <<= 9;
        }
        return all != 0;
    }

    /** {@link #addIfAbsent(long, long)} in the blocked layout; see {@link #blockedProbe}. */
    private boolean blockedAdd(long h) {
        long base = blockedBase(h);
        long[] chunk = blocked[(int) (base >>> PagedWords.CHUNK_SHIFT)];
        int b = (int) base & (PagedWords.CHUNK_WORDS - 1);
        long missing = 0;
        long x = FilterSpec.mix(h + FilterSpec.GOLDEN_GAMMA);
        for (int i = 0, f = 0, j = 1, k = scratch.length; i < k; i++, f++) {
            if (f == 7) {
                x = FilterSpec.mix(h + ++j * FilterSpec.GOLDEN_GAMMA);
                f = 0;
            }
            int bit = (int) (x >>> 55);
            int w = b + (bit >>> 6);
            long mask = 1L << bit;
            missing |= ~chunk[w] & mask;
            chunk[w] |= mask;
            x <<= 9;
        }
        if (missing != 0) {
            itemsAdded++;
            return true;
        }
        return false;
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
        if (blocked != null) {
            return blockedAdd(h1);
        }
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
     * The false-positive rate now, from the bits set: the probability that the k positions of an
     * item never added are all set. In the classic layout it is the fill ratio to the power k. In a
     * paged layout it is the mean over pages of each page's own chance ({@link
     * Sizing.PagedModel#hitGivenSet}, the layout's model of {@link #expectedFpp()} applied to the
     * page's real bits): pages hold unequal loads, so the fill ratio to the power k would be too
     * low (about 27% at 0.1% in 1024-bit pages). It costs one pass over the allocated pages.
     */
    public double currentFpp() {
        if (spec.isClassic() || spec.pages() == 1) {
            return Math.pow(fillRatio(), spec.hashes());
        }
        Sizing.PagedModel model = new Sizing.PagedModel(spec.pageBits(), spec.hashes());
        long pageWords = spec.pageWords(1);
        double sum = 0;
        for (long p = words.nextNonEmptyPage(0, pageWords);
                p >= 0;
                p = words.nextNonEmptyPage(p + 1, pageWords)) {
            int set = 0;
            for (long i = p * pageWords, end = i + pageWords; i < end; i++) {
                set += Long.bitCount(words.get(i));
            }
            sum += model.hitGivenSet(set);
        }
        return sum / spec.pages();
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
