package io.bloomstream.filter;

import java.util.Objects;

/**
 * The shape of a filter: m bits (or counters), k hashes, the page size and the {@link Hasher}.
 * Immutable; two filters can be merged or compared only when their specs are equal.
 *
 * <p>Each item hashes to one page and sets its k positions inside that page (a blocked Bloom
 * filter), so an operation touches one page: one cache line in memory at the default page size, one
 * state entry in Flink. {@link #CLASSIC} makes one page span the whole filter, the textbook layout.
 *
 * <p>Positions: the page is {@code floor(h1 * pages / 2^64)}; the k positions come from enhanced
 * double hashing (Kirsch and Mitzenmacher, "Less hashing, same performance", 2006), g_i = h2 + i h1
 * + (i^3 - i) / 6 (mod 2^64), each passed through the SplitMix64 finalizer before it is reduced to
 * the page. Without the finalizer, double hashing inside a 512-bit page collides whole position
 * patterns: a simulation measured 1.9x the model's rate at p = 0.01%.
 *
 * <p>With a 64-bit hasher ({@link HashStrategy#XXH3_64}) an item has one 64-bit hash h (passed as
 * h1; h2 is ignored): the page is computed from h as above and the positions are the b-bit fields
 * of the SplitMix64 sequence seeded with h ({@link #positions64}), the re-mixing that RocksDB's
 * FastLocalBloom and Boost.Bloom use to get all positions from one hash.
 */
public final class FilterSpec {

    /** Page size meaning "one page spans the whole filter": the classic layout. */
    public static final int CLASSIC = 0;

    /**
     * The default page size: 512 bits, one 64-byte cache line. At p = 1% it needs 9.92 bits per
     * item against the classic 9.59 (+3.5%); see {@code benchmarks/RESULTS.md} for the sweep.
     */
    public static final int DEFAULT_PAGE_BITS = 512;

    /**
     * Page size meaning "choose for me" (the builder's default): with a target rate, the smallest
     * page from 512 bits up that costs at most 5% more memory than the classic layout ({@link
     * Sizing#autoPageBits}), or classic for filters too small to page well; with explicit bits and
     * hashes, {@link #DEFAULT_PAGE_BITS}.
     */
    public static final int AUTO_PAGE_BITS = -1;

    /** The smallest page size, one 64-bit word. */
    public static final int MIN_PAGE_BITS = 64;

    /** The largest page size, 2^16 bits (8 KiB). */
    public static final int MAX_PAGE_BITS = 1 << 16;

    private static final long[] CUBES = new long[Sizing.MAX_HASHES];

    static {
        for (int i = 0; i < CUBES.length; i++) {
            CUBES[i] = ((long) i * i * i - i) / 6;
        }
    }

    private final long bits;
    private final int hashes;
    private final int pageBits;
    private final Hasher hasher;
    private final long pages;
    private final int pageShift;
    private final int fieldsPerValue;
    private final boolean single64;

    private FilterSpec(long bits, int hashes, int pageBits, Hasher hasher) {
        this.bits = bits;
        this.hashes = hashes;
        this.pageBits = pageBits;
        this.hasher = hasher;
        this.pages = pageBits == CLASSIC ? 1 : bits / pageBits;
        this.pageShift = pageBits == CLASSIC ? -1 : 64 - Integer.numberOfTrailingZeros(pageBits);
        this.fieldsPerValue =
                pageBits == CLASSIC ? 1 : 64 / Integer.numberOfTrailingZeros(pageBits);
        this.single64 = hasher.is64Bit();
    }

    /**
     * A spec for n expected items at false-positive rate p, with the default page size and hasher.
     *
     * @throws IllegalArgumentException if n &lt; 1 or p is not in (0, 1)
     */
    public static FilterSpec forItems(long expectedItems, double fpp) {
        return builder().expectedItems(expectedItems).fpp(fpp).build();
    }

    /**
     * A spec with explicit parameters.
     *
     * @throws IllegalArgumentException if a parameter is out of range, or bits is not a whole
     *     number of pages
     */
    public static FilterSpec of(long bits, int hashes, int pageBits, Hasher hasher) {
        Sizing.checkBits(bits);
        Sizing.checkHashes(hashes);
        Objects.requireNonNull(hasher, "hasher");
        if (pageBits != CLASSIC) {
            checkPageBits(pageBits);
            if (bits % pageBits != 0) {
                throw new IllegalArgumentException(
                        "bits must be a multiple of pageBits=" + pageBits + ", was " + bits);
            }
            if (bits / pageBits > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "bits=" + bits + " is more than 2^31-1 pages of " + pageBits + " bits");
            }
        }
        return new FilterSpec(bits, hashes, pageBits, hasher);
    }

    /** A builder; see {@link Builder}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Whether {@code pageBits} is a page size: a power of two from 64 to 65536. */
    public static boolean isPageSize(int pageBits) {
        return pageBits >= MIN_PAGE_BITS
                && pageBits <= MAX_PAGE_BITS
                && Integer.bitCount(pageBits) == 1;
    }

    static void checkPageBits(int pageBits) {
        if (!isPageSize(pageBits)) {
            throw new IllegalArgumentException(
                    "pageBits must be a power of two in ["
                            + MIN_PAGE_BITS
                            + ", "
                            + MAX_PAGE_BITS
                            + "] or CLASSIC (0), was "
                            + pageBits);
        }
    }

    /** m, the number of bits (counters, for a counting filter). */
    public long bits() {
        return bits;
    }

    /** k, the number of positions per item. */
    public int hashes() {
        return hashes;
    }

    /** The page size in bits, or {@link #CLASSIC}. */
    public int pageBits() {
        return pageBits;
    }

    /** Whether one page spans the whole filter. */
    public boolean isClassic() {
        return pageBits == CLASSIC;
    }

    /** The number of pages (1 for the classic layout). */
    public long pages() {
        return pages;
    }

    /** The bits in one page: {@link #pageBits()}, or m for the classic layout. */
    public long bitsPerPage() {
        return pageBits == CLASSIC ? bits : pageBits;
    }

    /**
     * The 64-bit words of the whole filter when each cell takes {@code bitsPerCell} bits (1 for a
     * Bloom filter, 4 for a counting one).
     */
    long words(int bitsPerCell) {
        return (bits * bitsPerCell + 63) >>> 6;
    }

    /**
     * The 64-bit words of one page when each cell takes {@code bitsPerCell} bits; capped at {@code
     * Integer.MAX_VALUE} for a classic filter too large for one array (such a filter is never
     * handled page by page).
     */
    int pageWords(int bitsPerCell) {
        return (int) Math.min(Integer.MAX_VALUE, (bitsPerPage() * bitsPerCell + 63) >>> 6);
    }

    /** The hasher. */
    public Hasher hasher() {
        return hasher;
    }

    /** The theoretical false-positive rate of this layout after n distinct insertions. */
    public double expectedFpp(long items) {
        return Sizing.pagedFalsePositiveRate(bits, hashes, items, pageBits);
    }

    /** The page an item with hash (h1, h2) falls in, in [0, pages). */
    public long page(long h1) {
        return pages == 1 ? 0 : Math.multiplyHigh(h1, pages) + ((h1 >> 63) & pages);
    }

    /**
     * Writes the k positions of the item (h1, h2) inside its page, each in [0, {@link
     * #bitsPerPage()}), into {@code out[0..k)}.
     *
     * <p>Enhanced double hashing gives the 64-bit values g_j = h2 + j h1 + (j^3 - j) / 6, each
     * passed through the SplitMix64 finalizer. In a paged filter of 2^b-bit pages one finalized
     * value yields floor(64 / b) positions (its successive b-bit fields: 7 per value for 512-bit
     * pages), so the usual k costs one or two finalizer rounds; the classic layout reduces each
     * value to [0, m) by a multiply-high.
     */
    public void positions(long h1, long h2, long[] out) {
        if (single64) {
            positions64(h1, out);
            return;
        }
        int k = hashes;
        if (pageShift < 0) {
            for (int i = 0; i < k; i++) {
                long x = mix(h2 + i * h1 + CUBES[i]);
                out[i] = Math.multiplyHigh(x, bits) + ((x >> 63) & bits);
            }
            return;
        }
        int width = 64 - pageShift;
        int i = 0;
        for (int j = 0; i < k; j++) {
            long x = mix(h2 + j * h1 + CUBES[j]);
            for (int f = 0; f < fieldsPerValue && i < k; f++, i++) {
                out[i] = x >>> pageShift;
                x <<= width;
            }
        }
    }

    /**
     * The i-th position (0 &lt;= i &lt; k) of an item inside its page; see {@link #positions}.
     * Prefer {@code positions}, which finalizes each value once.
     */
    public long position(long h1, long h2, int i) {
        if (single64) {
            if (pageShift < 0) {
                return reduce(mix(h1 + (i + 1) * GOLDEN_GAMMA), bits);
            }
            int j = i / fieldsPerValue;
            long x = mix(h1 + (j + 1) * GOLDEN_GAMMA);
            return (x << ((i % fieldsPerValue) * (64 - pageShift))) >>> pageShift;
        }
        if (pageShift < 0) {
            long x = mix(h2 + i * h1 + CUBES[i]);
            return Math.multiplyHigh(x, bits) + ((x >> 63) & bits);
        }
        int j = i / fieldsPerValue;
        long x = mix(h2 + j * h1 + CUBES[j]);
        return (x << ((i % fieldsPerValue) * (64 - pageShift))) >>> pageShift;
    }

    /**
     * The positions of the layout for 64-bit hashes: writes the k positions of the item with 64-bit
     * hash {@code h} inside its page ({@link #page(long) page(h)}) into {@code out[0..k)}.
     *
     * <p>The values x_j = mix(h + (j + 1) * 0x9E3779B97F4A7C15) are the SplitMix64 sequence seeded
     * with h (Steele, Lea and Flood 2014); in a paged filter of 2^b-bit pages each x_j gives
     * floor(64 / b) positions, its successive b-bit fields from the top (7 for 512-bit pages, so k
     * &lt;= 7 costs one finalizer). The classic layout reduces each x_j to [0, m). The page takes
     * the top bits of h itself, the positions the bits of a bijective re-mix of h, so items in one
     * page of up to 2^32 pages still have 2^32 or more position patterns.
     */
    public void positions64(long h, long[] out) {
        int k = hashes;
        if (pageShift < 0) {
            for (int i = 0; i < k; i++) {
                out[i] = reduce(mix(h + (i + 1) * GOLDEN_GAMMA), bits);
            }
            return;
        }
        int width = 64 - pageShift;
        int i = 0;
        for (int j = 1; i < k; j++) {
            long x = mix(h + j * GOLDEN_GAMMA);
            for (int f = 0; f < fieldsPerValue && i < k; f++, i++) {
                out[i] = x >>> pageShift;
                x <<= width;
            }
        }
    }

    /** SplitMix64's increment, 2^64 / phi rounded to odd. */
    static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    /** {@code x} (read as unsigned) reduced to [0, n) by a multiply-high (Lemire 2016). */
    private static long reduce(long x, long n) {
        return Math.multiplyHigh(x, n) + ((x >> 63) & n);
    }

    /** The SplitMix64 finalizer (Steele, Lea and Flood 2014), a bijection on 64-bit values. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Throws if {@code other} differs from this spec, naming the first field that differs.
     *
     * @throws IllegalArgumentException if the specs differ
     */
    public void checkCompatible(FilterSpec other) {
        if (bits != other.bits) {
            throw incompatible("bits", bits, other.bits);
        }
        if (hashes != other.hashes) {
            throw incompatible("hashes", hashes, other.hashes);
        }
        if (pageBits != other.pageBits) {
            throw incompatible("pageBits", pageBits, other.pageBits);
        }
        if (!hasher.equals(other.hasher)) {
            throw incompatible("hasher", hasher, other.hasher);
        }
    }

    private static IllegalArgumentException incompatible(String field, Object a, Object b) {
        return new IllegalArgumentException(
                "incompatible filters: " + field + " differs (" + a + " vs " + b + ")");
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FilterSpec)) {
            return false;
        }
        FilterSpec s = (FilterSpec) o;
        return bits == s.bits
                && hashes == s.hashes
                && pageBits == s.pageBits
                && hasher.equals(s.hasher);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bits, hashes, pageBits, hasher);
    }

    @Override
    public String toString() {
        return "FilterSpec{bits="
                + bits
                + ", hashes="
                + hashes
                + ", pageBits="
                + (pageBits == CLASSIC ? "CLASSIC" : pageBits)
                + ", pages="
                + pages
                + ", hasher="
                + hasher
                + "}";
    }

    /**
     * Builds a {@link FilterSpec} either from a target (expected items and false-positive rate) or
     * from explicit bits and hashes, never both. Defaults: {@link #DEFAULT_PAGE_BITS}, {@link
     * Hasher#defaultHasher()}.
     */
    public static final class Builder {
        private long expectedItems = -1;
        private double fpp = Double.NaN;
        private long bits = -1;
        private int hashes = -1;
        private int pageBits = AUTO_PAGE_BITS;
        private Hasher hasher = Hasher.defaultHasher();

        private Builder() {}

        /** The number of distinct items the filter is sized for (n). */
        public Builder expectedItems(long expectedItems) {
            Sizing.checkItems(expectedItems);
            this.expectedItems = expectedItems;
            return this;
        }

        /** The target false-positive rate at {@link #expectedItems} (p). */
        public Builder fpp(double fpp) {
            Sizing.checkFpp(fpp);
            this.fpp = fpp;
            return this;
        }

        /** Explicit m; with the paged layout rounded up to a whole number of pages. */
        public Builder bits(long bits) {
            Sizing.checkBits(bits);
            this.bits = bits;
            return this;
        }

        /** Explicit k. */
        public Builder hashes(int hashes) {
            Sizing.checkHashes(hashes);
            this.hashes = hashes;
            return this;
        }

        /**
         * The page size in bits (a power of two, 64 to 65536), {@link #CLASSIC} or {@link
         * #AUTO_PAGE_BITS}.
         */
        public Builder pageBits(int pageBits) {
            if (pageBits != CLASSIC && pageBits != AUTO_PAGE_BITS) {
                checkPageBits(pageBits);
            }
            this.pageBits = pageBits;
            return this;
        }

        /** The hasher (strategy and seed or key). */
        public Builder hasher(Hasher hasher) {
            this.hasher = Objects.requireNonNull(hasher, "hasher");
            return this;
        }

        /**
         * Builds the spec.
         *
         * @throws IllegalArgumentException if neither or both of (expectedItems, fpp) and (bits,
         *     hashes) are complete
         */
        public FilterSpec build() {
            boolean target = expectedItems > 0 || !Double.isNaN(fpp);
            boolean explicit = bits > 0 || hashes > 0;
            if (target == explicit) {
                throw new IllegalArgumentException(
                        "give either expectedItems and fpp, or bits and hashes (got expectedItems="
                                + expectedItems
                                + ", fpp="
                                + fpp
                                + ", bits="
                                + bits
                                + ", hashes="
                                + hashes
                                + ")");
            }
            if (target) {
                if (expectedItems < 0 || Double.isNaN(fpp)) {
                    throw new IllegalArgumentException(
                            "expectedItems and fpp go together, got expectedItems="
                                    + expectedItems
                                    + ", fpp="
                                    + fpp);
                }
                int page =
                        pageBits == AUTO_PAGE_BITS
                                ? Sizing.autoPageBits(expectedItems, fpp)
                                : pageBits;
                if (page == CLASSIC) {
                    long[] mk = Sizing.sizeClassic(expectedItems, fpp);
                    return of(mk[0], (int) mk[1], CLASSIC, hasher);
                }
                long[] mk = Sizing.sizePaged(expectedItems, fpp, page);
                return of(mk[0], (int) mk[1], page, hasher);
            }
            if (bits < 0 || hashes < 0) {
                throw new IllegalArgumentException(
                        "bits and hashes go together, got bits=" + bits + ", hashes=" + hashes);
            }
            int page = pageBits == AUTO_PAGE_BITS ? DEFAULT_PAGE_BITS : pageBits;
            long m = bits;
            if (page != CLASSIC) {
                m = Math.max(page, (bits + page - 1) / page * page);
                Sizing.checkBits(m);
            }
            return of(m, hashes, page, hasher);
        }
    }
}
