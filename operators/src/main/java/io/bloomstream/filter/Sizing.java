package io.bloomstream.filter;

/**
 * The sizing maths of Bloom filters, for the classic layout (one bit array, k independent
 * positions) and for the paged ("blocked") layout in which each item's k positions fall in one page
 * of B bits.
 *
 * <p>Classic (Bloom 1970; see Broder and Mitzenmacher, "Network applications of Bloom filters",
 * 2004): for n items at false-positive rate p, m = -n ln p / (ln 2)^2 bits and k = (m/n) ln 2
 * hashes; with m bits, k hashes and n items the rate is (1 - e^(-kn/m))^k.
 *
 * <p>Paged (Putze, Sanders and Singler, "Cache-, hash- and space-efficient Bloom filters", 2007):
 * the number of items in a page is Binomial(n, 1/pages), and within a page that holds i items the
 * probe of k positions finds all of them set with probability g(k i), where g(t) is the exact
 * probability that k uniform positions (with replacement) are all hit by t uniform throws into B
 * cells. The rate is the mixture of g over the page load. Pages make each operation touch one cache
 * line (or one state entry) at the cost of a higher rate for the same memory; {@link #sizePaged}
 * compensates by searching for the smallest whole number of pages, and the k, that reach the target
 * rate under this model.
 */
public final class Sizing {

    /** (ln 2)^2. */
    static final double LN2_SQUARED = Math.log(2) * Math.log(2);

    /** The largest filter, in bits (or counters), that the storage can address: 2^40. */
    public static final long MAX_BITS = 1L << 40;

    /** The largest number of hash positions per item. */
    public static final int MAX_HASHES = 64;

    /** The memory penalty of paged against classic sizing that {@link #autoPageBits} accepts. */
    public static final double MAX_PAGE_PENALTY = 1.05;

    /** Above this k the paged model uses the mean page fill instead of the exact occupancy sum. */
    private static final int EXACT_MODEL_MAX_HASHES = 24;

    private Sizing() {}

    /**
     * The classic optimal number of bits, m = ceil(-n ln p / (ln 2)^2).
     *
     * @throws IllegalArgumentException if n &lt; 1, p is not in (0, 1), or m exceeds {@link
     *     #MAX_BITS}
     */
    public static long optimalBits(long expectedItems, double fpp) {
        checkItems(expectedItems);
        checkFpp(fpp);
        double m = Math.ceil(-expectedItems * Math.log(fpp) / LN2_SQUARED);
        if (m > MAX_BITS) {
            throw new IllegalArgumentException(
                    String.format(
                            "expectedItems=%d at fpp=%s needs %.0f bits, more than the %d bits a"
                                    + " filter can index",
                            expectedItems, fpp, m, MAX_BITS));
        }
        return Math.max(1, (long) m);
    }

    /**
     * The classic optimal number of hashes for m bits and n items, k = round((m/n) ln 2), at least
     * 1 and at most {@link #MAX_HASHES}.
     */
    public static int optimalHashes(long expectedItems, long bits) {
        checkItems(expectedItems);
        checkBits(bits);
        long k = Math.round((double) bits / expectedItems * Math.log(2));
        return (int) Math.max(1, Math.min(MAX_HASHES, k));
    }

    /** The classic theoretical false-positive rate (1 - e^(-kn/m))^k after n insertions. */
    public static double falsePositiveRate(long bits, int hashes, long items) {
        checkBits(bits);
        checkHashes(hashes);
        if (items < 0) {
            throw new IllegalArgumentException("items must be >= 0, was " + items);
        }
        return Math.pow(-Math.expm1(-(double) hashes * items / bits), hashes);
    }

    /**
     * The theoretical false-positive rate of the paged layout after n insertions into {@code bits /
     * pageBits} pages of {@code pageBits} bits each. With {@code pageBits == FilterSpec.CLASSIC}
     * (one page spanning the filter) it is the classic rate.
     */
    public static double pagedFalsePositiveRate(long bits, int hashes, long items, int pageBits) {
        checkBits(bits);
        checkHashes(hashes);
        if (pageBits == FilterSpec.CLASSIC) {
            return falsePositiveRate(bits, hashes, items);
        }
        FilterSpec.checkPageBits(pageBits);
        long pages = bits / pageBits;
        return new PagedModel(pageBits, hashes).rate(items, pages);
    }

    /**
     * Sizes a paged filter: the smallest whole number of pages, and the k that achieves it, whose
     * theoretical rate at n items is at most p.
     *
     * @return {bits, hashes}
     */
    public static long[] sizePaged(long expectedItems, double fpp, int pageBits) {
        SizingKey key = new SizingKey(expectedItems, fpp, pageBits);
        long[] cached = PAGED_CACHE.get(key);
        if (cached == null) {
            cached = computeSizePaged(expectedItems, fpp, pageBits);
            if (PAGED_CACHE.size() >= CACHE_LIMIT) {
                PAGED_CACHE.clear();
            }
            PAGED_CACHE.put(key, cached);
        }
        return cached.clone();
    }

    /** Sizing is deterministic and costs milliseconds; operators size many filters alike. */
    private static final int CACHE_LIMIT = 4096;

    private static final java.util.concurrent.ConcurrentHashMap<SizingKey, long[]> PAGED_CACHE =
            new java.util.concurrent.ConcurrentHashMap<>();

    private record SizingKey(long expectedItems, double fpp, int pageBits) {}

    private static long[] computeSizePaged(long expectedItems, double fpp, int pageBits) {
        long classicBits = optimalBits(expectedItems, fpp);
        FilterSpec.checkPageBits(pageBits);
        int classicK = optimalHashes(expectedItems, classicBits);
        long bestPages = Long.MAX_VALUE;
        int bestK = classicK;
        for (int k = Math.max(1, classicK - 4); k <= Math.min(MAX_HASHES, classicK + 2); k++) {
            PagedModel model = new PagedModel(pageBits, k);
            long lo = Math.max(1, classicBits / pageBits);
            long hi = lo;
            while (model.rate(expectedItems, hi) > fpp) {
                lo = hi;
                hi *= 2;
                if (hi * (double) pageBits > MAX_BITS) {
                    hi = -1;
                    break;
                }
            }
            if (hi < 0) {
                continue;
            }
            while (lo < hi) {
                long mid = lo + (hi - lo) / 2;
                if (model.rate(expectedItems, mid) <= fpp) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            if (hi < bestPages) {
                bestPages = hi;
                bestK = k;
            }
        }
        if (bestPages == Long.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "expectedItems=" + expectedItems + " at fpp=" + fpp + " exceeds MAX_BITS");
        }
        return new long[] {bestPages * pageBits, bestK};
    }

    /**
     * Sizes a classic filter with a whole number of hashes: the smallest m, over k near the
     * optimum, whose rate (1 - e^(-kn/m))^k is at most p, that is m = -k n / ln(1 - p^(1/k)). It is
     * at most a few tenths of a percent above {@link #optimalBits}, which assumes a real k.
     *
     * @return {bits, hashes}
     */
    public static long[] sizeClassic(long expectedItems, double fpp) {
        long formula = optimalBits(expectedItems, fpp);
        int optimalK = optimalHashes(expectedItems, formula);
        long bestBits = Long.MAX_VALUE;
        int bestK = optimalK;
        for (int k = Math.max(1, optimalK - 1); k <= Math.min(MAX_HASHES, optimalK + 1); k++) {
            double root = Math.pow(fpp, 1.0 / k);
            double exact = Math.ceil(-k * (double) expectedItems / Math.log1p(-root));
            if (!(exact <= MAX_BITS) || falsePositiveRate(MAX_BITS, k, expectedItems) > fpp) {
                continue; // this k cannot reach the rate within MAX_BITS
            }
            long m = (long) exact;
            // guard against rounding in the closed form: a few steps at most, bounded
            for (int step = 0; step < 64 && m > 1; step++) {
                if (falsePositiveRate(m - 1, k, expectedItems) > fpp) {
                    break;
                }
                m--;
            }
            for (int step = 0; step < 64 && m < MAX_BITS; step++) {
                if (falsePositiveRate(m, k, expectedItems) <= fpp) {
                    break;
                }
                m++;
            }
            if (falsePositiveRate(m, k, expectedItems) > fpp) {
                continue;
            }
            if (m < bestBits) {
                bestBits = m;
                bestK = k;
            }
        }
        if (bestBits == Long.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "expectedItems="
                            + expectedItems
                            + " at fpp="
                            + fpp
                            + " needs more than the "
                            + MAX_BITS
                            + " bits a filter can index");
        }
        checkBits(bestBits);
        return new long[] {bestBits, bestK};
    }

    /**
     * The page size that {@link FilterSpec#AUTO_PAGE_BITS} resolves to: the smallest power of two
     * from {@link FilterSpec#DEFAULT_PAGE_BITS} up whose paged sizing needs at most {@link
     * #MAX_PAGE_PENALTY} times the classic bits (512 bits at p = 1%, 1024 at 0.1%, 2048 at 0.01%,
     * for large n). A filter too small for that (a few pages) is classic: {@link
     * FilterSpec#CLASSIC}, one page spanning its few cache lines.
     */
    public static int autoPageBits(long expectedItems, double fpp) {
        double classic = sizeClassic(expectedItems, fpp)[0];
        for (int page = FilterSpec.DEFAULT_PAGE_BITS;
                page <= FilterSpec.MAX_PAGE_BITS && page < classic;
                page *= 2) {
            long[] paged;
            try {
                paged = sizePaged(expectedItems, fpp, page);
            } catch (IllegalArgumentException tooLarge) {
                continue; // this page size cannot reach the rate within MAX_BITS
            }
            if (paged[0] <= MAX_PAGE_PENALTY * classic) {
                return page;
            }
        }
        return FilterSpec.CLASSIC;
    }

    /**
     * The rate penalty of paged against classic layout that {@link #autoPageBits(long, int, long)}
     * accepts.
     */
    public static final double MAX_PAGE_RATE_PENALTY = 1.05;

    /**
     * The page size for an explicit shape (m bits, k hashes) that will hold about n items: the
     * smallest power of two from {@link FilterSpec#DEFAULT_PAGE_BITS} up whose paged rate at n
     * items, with m rounded up to whole pages, is at most {@link #MAX_PAGE_RATE_PENALTY} times the
     * classic rate (1 - e^(-kn/m))^k of the same m and k; {@link FilterSpec#CLASSIC} when no page
     * of at most m/16 bits gets there (so rounding m up to whole pages adds at most 1/16). Unlike
     * {@link #autoPageBits(long, double)}, which sizes m for a target and lets pages cost up to 5%
     * more bits, the memory is fixed here, so the page must cost the rate little: at m/n = 20 and k
     * = 10 a 512-bit page has 2.3x the classic rate.
     *
     * @throws IllegalArgumentException if bits or hashes are out of range, or items &lt; 1
     */
    public static int autoPageBits(long bits, int hashes, long items) {
        checkBits(bits);
        checkHashes(hashes);
        checkItems(items);
        double classic = falsePositiveRate(bits, hashes, items);
        for (int page = FilterSpec.DEFAULT_PAGE_BITS;
                page <= FilterSpec.MAX_PAGE_BITS && 16L * page <= bits;
                page *= 2) {
            long paged = (bits + page - 1) / page * page;
            if (paged > MAX_BITS) {
                break;
            }
            if (pagedFalsePositiveRate(paged, hashes, items, page)
                    <= MAX_PAGE_RATE_PENALTY * classic) {
                return page;
            }
        }
        return FilterSpec.CLASSIC;
    }

    /** Bits per item, m / n. */
    public static double bitsPerItem(long bits, long expectedItems) {
        checkBits(bits);
        checkItems(expectedItems);
        return (double) bits / expectedItems;
    }

    /** Bytes needed for m bits, ceil(m / 8). */
    public static long bytes(long bits) {
        checkBits(bits);
        return (bits + 7) / 8;
    }

    /** The information-theoretic floor, log2(1/p) bits per item, that no filter can beat. */
    public static double lowerBoundBitsPerItem(double fpp) {
        checkFpp(fpp);
        return -Math.log(fpp) / Math.log(2);
    }

    static void checkItems(long expectedItems) {
        if (expectedItems < 1) {
            throw new IllegalArgumentException("expectedItems must be >= 1, was " + expectedItems);
        }
    }

    static void checkFpp(double fpp) {
        if (!(fpp > 0 && fpp < 1)) {
            throw new IllegalArgumentException("fpp must be in (0, 1), was " + fpp);
        }
    }

    static void checkBits(long bits) {
        if (bits < 1 || bits > MAX_BITS) {
            throw new IllegalArgumentException(
                    "bits must be in [1, " + MAX_BITS + "], was " + bits);
        }
    }

    static void checkHashes(int hashes) {
        if (hashes < 1 || hashes > MAX_HASHES) {
            throw new IllegalArgumentException(
                    "hashes must be in [1, " + MAX_HASHES + "], was " + hashes);
        }
    }

    /** The paged-layout model for one page size and k; caches g(t) for t = k i. */
    static final class PagedModel {
        private final int pageBits;
        private final int hashes;
        private final double[] distinctProbeCells; // P(D = j): k probes hit j distinct cells
        private final double[] logKeep; // ln(1 - l/B) for l = 0..k
        private double[] hitByLoad = new double[0]; // g(k i) for i = 0..
        private double[] empty; // computeHit's scratch: (1 - l/B)^t for l = 0..k

        /**
         * Loads cached per model (8 KiB): the loads of sane filters (pageBits / bits per item, 51
         * at 1% in 512-bit pages). Higher loads are computed as they come, without allocating: a
         * model's memory does not follow a load that a file's fields or a caller chose (found by
         * fuzzing: a scalable filter's header sized stages of 25,000 items a page, 1.4 MB of
         * cache).
         */
        private static final int CACHE_LIMIT = 1 << 10;

        /** Items a page past which every bit is set many times over: see {@link #rate}. */
        private static final int SATURATED_LOAD = 1 << 17;

        PagedModel(int pageBits, int hashes) {
            this.pageBits = pageBits;
            this.hashes = hashes;
            this.distinctProbeCells = distinctCells(pageBits, hashes);
            this.logKeep = new double[hashes + 1];
            for (int l = 0; l <= hashes; l++) {
                logKeep[l] = Math.log1p(-(double) l / pageBits);
            }
        }

        /** The rate for n items spread over the given number of pages. */
        double rate(long items, long pages) {
            double q = 1.0 / pages;
            if (pages == 1) {
                return hit(items);
            }
            double mean = items * q;
            if (mean >= SATURATED_LOAD) {
                // Far past any sane load (2^17 items a page: every bit set many times over), a
                // page's load is within 0.3% of the mean (sd / mean = 1 / sqrt(mean)) and the walk
                // below would take about sqrt(mean) steps of hit(): the rate at the mean load.
                // Found by fuzzing: a 49-byte filter whose itemsAdded said 2^59 cost 2 s here.
                return hit((long) mean);
            }
            long mode = (long) Math.floor((items + 1) * q);
            // Binomial weights relative to the mode, normalized at the end (no underflow).
            double sum = 0;
            double norm = 0;
            double w = 1;
            for (long i = mode; i <= items; i++) {
                sum += w * hit(i);
                norm += w;
                w *= (double) (items - i) / (i + 1) * q / (1 - q);
                if (w < 1e-18 * norm && i > mean) {
                    break;
                }
            }
            w = 1;
            for (long i = mode; i > 0; i--) {
                w *= (double) i / (items - i + 1) * (1 - q) / q;
                sum += w * hit(i - 1);
                norm += w;
                if (w < 1e-18 * norm && i < mean) {
                    break;
                }
            }
            return sum / norm;
        }

        /**
         * The probability that a probe of k positions in a page with {@code set} of its B cells set
         * finds all of them set: the sum over j of P(D = j) times the chance that j distinct cells
         * all fall among the set ones, (set)_j / (B)_j in falling factorials. It reads a page's
         * real bits where {@link #hit} models its load; the mean over pages is the rate of a filter
         * as it is (the fill ratio to the power k is lower: it treats unequal pages as equal).
         */
        double hitGivenSet(int set) {
            double total = 0;
            double allSet = 1;
            for (int j = 1; j <= hashes && j <= set; j++) {
                allSet *= (double) (set - j + 1) / (pageBits - j + 1);
                total += distinctProbeCells[j] * allSet;
            }
            return Math.min(1, total);
        }

        /** g(k i): the probability that a probe finds all its cells set in a page of i items. */
        double hit(long items) {
            if (items >= Integer.MAX_VALUE / Math.max(1, hashes)) {
                return 1.0;
            }
            int i = (int) items;
            if (i >= CACHE_LIMIT) {
                return computeHit((long) i * hashes); // past the cache: computed as it comes
            }
            if (i >= hitByLoad.length) {
                int oldLength = hitByLoad.length;
                double[] grown =
                        java.util.Arrays.copyOf(
                                hitByLoad, Math.min(CACHE_LIMIT, Math.max(i + 1, oldLength * 2)));
                for (int j = oldLength; j < grown.length; j++) {
                    grown[j] = computeHit((long) j * hashes);
                }
                hitByLoad = grown;
            }
            return hitByLoad[i];
        }

        private double computeHit(long throws_) {
            if (hashes > EXACT_MODEL_MAX_HASHES) {
                double fill = -Math.expm1(throws_ * Math.log1p(-1.0 / pageBits));
                return Math.pow(fill, hashes);
            }
            // P(all of j given cells occupied after t throws) by inclusion-exclusion:
            // sum over l of (-1)^l C(j, l) (1 - l/B)^t, with (1 - l/B)^t computed once per l.
            if (empty == null) {
                empty = new double[hashes + 1];
            }
            for (int l = 0; l <= hashes; l++) {
                empty[l] = Math.exp(throws_ * logKeep[l]);
            }
            double total = 0;
            for (int j = 1; j <= hashes; j++) {
                double pj = distinctProbeCells[j];
                if (pj == 0) {
                    continue;
                }
                double s = 0;
                double binom = 1;
                for (int l = 0; l <= j; l++) {
                    double term = binom * empty[l];
                    s += (l % 2 == 0) ? term : -term;
                    binom = binom * (j - l) / (l + 1);
                }
                total += pj * Math.max(0, s);
            }
            return Math.min(1, total);
        }

        /** P(D = j) for j = 0..k: Stirling numbers of the second kind times falling factorials. */
        private static double[] distinctCells(int cells, int k) {
            // dp[j] = P(j distinct cells after the probes so far)
            // Two arrays swapped, not one a probe: k = 64 allocated 33 KB a model, and a cascade's
            // sizing builds dozens of models (found by fuzzing: 1.4 MB for a 585-byte header).
            double[] dp = new double[k + 1];
            double[] next = new double[k + 1];
            dp[0] = 1;
            for (int probe = 0; probe < k; probe++) {
                java.util.Arrays.fill(next, 0);
                for (int j = 0; j <= probe; j++) {
                    if (dp[j] == 0) {
                        continue;
                    }
                    double same = (double) j / cells;
                    next[j] += dp[j] * same;
                    next[j + 1] += dp[j] * (1 - same);
                }
                double[] swap = dp;
                dp = next;
                next = swap;
            }
            return dp;
        }
    }
}
