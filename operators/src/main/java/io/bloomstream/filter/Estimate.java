package io.bloomstream.filter;

/**
 * A distinct-count estimate read from a filter's bits. For the classic layout it is the estimate of
 * Swamidass and Baldi (2007), n = -(m/k) ln(1 - X/m) = m ln(m/m0) / k, for m cells, X of them set
 * (m0 = m - X zero) and k hashes.
 *
 * <p>The paged layout needs a correction: the k positions of an item fall in one page of B cells,
 * so they collide with each other with probability about k^2 / 2B (4% at k = 7, B = 512), and the
 * classic formula would under-count by about (k - 1) / 2B (0.6%). With P pages, a cell stays zero
 * under one item with probability 1 - q, q = (1 - (1 - 1/B)^k) / P, so E[m0/m] = (1 - q)^n and n =
 * ln(m/m0) / -ln(1 - q); for one page (B = m) this is the classic estimate.
 *
 * <p>The standard error is the delta method on the exact variance of m0 (the occupancy variance of
 * each page under a binomial page load, conditioned on the n items the pages share): se(n) = sd(m0)
 * / (m0 * -ln(1 - q)). For the classic layout it reduces to the linear-counting error of Whang,
 * Vander-Zanden and Taylor (1990), sqrt(m (e^t - t - 1)) / k.
 *
 * <p>Whether the estimate means something is decided relative to the filter's own size, through
 * sd(m0), the standard deviation of the zero count at the estimated n (so a filter of a few dozen
 * cells is judged like one of millions, and an empty or sparse filter of any size is fine):
 *
 * <ul>
 *   <li>{@linkplain #saturated() Saturated}: m0 = 0, or m0 &lt;= {@link #DEFAULT_Z} sd(m0). Then
 *       the upper bound of n, ln(m / (m0 - z sd(m0))) / -ln(1 - q), does not exist: the bits cannot
 *       bound the count from above. The value is then the largest the filter can resolve (m0 = 0
 *       counts as half a zero cell), never an exception or infinity.
 *   <li>{@linkplain #valid() Valid}: not saturated, and either se(n) &lt;= 1 item (meaningful
 *       whatever the filter's size, as for a filter of a few bits sized for one or two items), or
 *       sd(m0) / m0 &lt;= {@link #MAX_LOG_ERROR} (the standard error of ln(m/m0), so the
 *       delta-method error of the logarithm is meaningful) and se(n) &lt;= {@link
 *       #MAX_RELATIVE_ERROR} max(n, 10). For a large filter sd(m0) ~ sqrt(m0) near full, so the
 *       first bound is m0 >= 16 zero cells, and saturation m0 &lt;= 9; for a small or sparse filter
 *       m0 is close to m and nearly certain, so it is valid (an empty filter: estimate 0, error 0).
 * </ul>
 *
 * A sum of estimates is valid when all parts are and saturated when any part is.
 *
 * @param estimate the estimated number of distinct items
 * @param standardError one standard error of {@code estimate}
 * @param setCells X, the number of set bits (non-zero counters)
 * @param cells m
 * @param hashes k
 * @param valid whether the estimate can be trusted (see above)
 * @param saturated whether too few zero cells are left to bound the estimate (see above); implies
 *     not valid
 */
public record Estimate(
        double estimate,
        double standardError,
        long setCells,
        long cells,
        int hashes,
        boolean valid,
        boolean saturated) {

    /**
     * A standard error of ln(m/m0), sd(m0) / m0, above this makes the estimate invalid (for a large
     * nearly full filter: fewer than 16 zero cells).
     */
    public static final double MAX_LOG_ERROR = 0.25;

    /**
     * A standard error above this fraction of the estimate (of 10 items, for smaller estimates)
     * makes the estimate invalid.
     */
    public static final double MAX_RELATIVE_ERROR = 0.1;

    /** z for the default two-sided 99.7% interval of {@link #lower()} and {@link #upper()}. */
    public static final double DEFAULT_Z = 3.0;

    /** The estimate for a filter of the given spec with X set cells. */
    public static Estimate of(long setCells, FilterSpec spec) {
        return of(setCells, spec.bits(), spec.hashes(), spec.bitsPerPage());
    }

    /**
     * The estimate for X set cells out of m, k hashes, pages of B cells (B = m: classic).
     *
     * @throws IllegalArgumentException unless 0 &lt;= X &lt;= m, k >= 1 and B divides m
     */
    public static Estimate of(long setCells, long cells, int hashes, long pageCells) {
        if (cells < 1
                || setCells < 0
                || setCells > cells
                || hashes < 1
                || pageCells < 1
                || cells % pageCells != 0) {
            throw new IllegalArgumentException(
                    "need 0 <= setCells <= cells, hashes >= 1 and pageCells dividing cells; was"
                            + " setCells="
                            + setCells
                            + ", cells="
                            + cells
                            + ", hashes="
                            + hashes
                            + ", pageCells="
                            + pageCells);
        }
        double pages = (double) cells / pageCells;
        double b = pageCells;
        // a: P(a given cell of the item's page stays zero under the item's k positions)
        double logA = hashes * Math.log1p(-1 / b);
        double q = -Math.expm1(logA) / pages;
        double c = -Math.log1p(-q); // -ln(1 - q)
        long zero = cells - setCells;
        // With no zero cell left, report what half a zero cell would give: a finite value.
        double zeroForLog = zero == 0 ? 0.5 : zero;
        double n = Math.log(cells / zeroForLog) / c;
        double zeroSd = Math.sqrt(zeroVariance(n, pages, b, hashes));
        double se = zeroSd / (zeroForLog * c);
        boolean saturated = zero == 0 || zero <= DEFAULT_Z * zeroSd;
        // An error of at most one item is meaningful whatever the filter's size (a filter of a few
        // bits sized for one or two items); otherwise the log error and the relative error decide.
        boolean valid =
                !saturated
                        && (se <= 1
                                || (zeroSd <= MAX_LOG_ERROR * zero
                                        && se / Math.max(n, 10) <= MAX_RELATIVE_ERROR));
        return new Estimate(n, se, setCells, cells, hashes, valid, saturated);
    }

    /**
     * Var(m0) after n items. Each page's zero count Z has the variance of a Binomial(n, 1/P) page
     * load L; the page loads of a fixed n are not independent (they sum to n), so the sum over
     * pages is conditioned on it: Var(S | N = n) ~ Var(S) - Cov(S, N)^2 / Var(N), with Cov(S, N) =
     * P Cov(Z, L) and Var(N) = n (1 - 1/P) under independent pages. Without that term a sparse
     * paged filter's error would be about sqrt(n), the spread of the page loads, instead of the few
     * cells that in-page collisions decide.
     */
    private static double zeroVariance(double n, double pages, double b, int hashes) {
        if (n == 0) {
            return 0;
        }
        double oneMinusA = -Math.expm1(hashes * Math.log1p(-1 / b)); // 1 - (1 - 1/B)^k
        double oneMinusB = b < 2 ? 1 : -Math.expm1(hashes * Math.log1p(-2 / b)); // 1-(1-2/B)^k
        double pi = 1 / pages;
        double ea = Math.exp(n * Math.log1p(-oneMinusA * pi)); // E[a^L]
        double eb = Math.exp(n * Math.log1p(-oneMinusB * pi)); // E[b^L]
        double perPage = b * ea + b * (b - 1) * eb - b * b * ea * ea;
        double variance = pages * perPage;
        if (pages > 1) {
            // Cov(Z, L) = -B n pi (1 - a) (1 - pi) E[a^L] / (1 - pi (1 - a))
            double cov = -b * n * pi * oneMinusA * (1 - pi) * ea / (1 - pi * oneMinusA);
            variance -= pages * pages * cov * cov / (n * (1 - pi));
        }
        return Math.max(0, variance);
    }

    /** The sum of independent estimates (the stages of a cascade, or shards). */
    public static Estimate sum(Iterable<Estimate> parts) {
        double n = 0;
        double variance = 0;
        long set = 0;
        long cells = 0;
        int hashes = 0;
        boolean valid = true;
        boolean saturated = false;
        for (Estimate e : parts) {
            n += e.estimate;
            variance += e.standardError * e.standardError;
            set += e.setCells;
            cells += e.cells;
            hashes = Math.max(hashes, e.hashes);
            valid &= e.valid;
            saturated |= e.saturated;
        }
        return new Estimate(n, Math.sqrt(variance), set, cells, hashes, valid, saturated);
    }

    /** The fraction of cells set, X / m. */
    public double fillRatio() {
        return cells == 0 ? 0 : (double) setCells / cells;
    }

    /** {@code estimate - z * standardError}, at least 0. */
    public double lower(double z) {
        return Math.max(0, estimate - z * standardError);
    }

    /** {@code estimate + z * standardError}. */
    public double upper(double z) {
        return estimate + z * standardError;
    }

    /** {@link #lower(double)} at {@link #DEFAULT_Z}. */
    public double lower() {
        return lower(DEFAULT_Z);
    }

    /** {@link #upper(double)} at {@link #DEFAULT_Z}. */
    public double upper() {
        return upper(DEFAULT_Z);
    }
}
