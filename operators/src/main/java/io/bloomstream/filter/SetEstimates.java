package io.bloomstream.filter;

/**
 * Set-size estimates between two filters of the same {@link FilterSpec} (Swamidass and Baldi,
 * "Mathematical correction for fingerprint similarity measures", 2007, use the same union
 * estimate): |A ∪ B| from the bitwise OR, and |A ∩ B| = |A| + |B| - |A ∪ B| by inclusion-exclusion.
 *
 * <p>The intersection inherits the errors of all three estimates; its standard error here is
 * sqrt(se_A^2 + se_B^2 + se_union^2), a conservative bound that ignores their positive correlation.
 * A small intersection of two large sets is therefore imprecise: the error scales with the sets,
 * not with the intersection.
 */
public final class SetEstimates {

    private SetEstimates() {}

    /**
     * The estimated size of the union.
     *
     * @throws IllegalArgumentException if the filters are incompatible (naming the field)
     */
    public static Estimate union(BloomFilter a, BloomFilter b) {
        return a.union(b).estimate();
    }

    /**
     * The estimated size of the intersection, at least 0.
     *
     * @throws IllegalArgumentException if the filters are incompatible (naming the field)
     */
    public static Estimate intersection(BloomFilter a, BloomFilter b) {
        return intersection(a.estimate(), b.estimate(), union(a, b));
    }

    /**
     * |A ∩ B| = |A| + |B| − |A ∪ B| from the three estimates, at least 0. Its standard error adds
     * the three variances, which overstates it (the estimates are positively correlated); it is
     * valid when all three are, saturated when any is.
     */
    public static Estimate intersection(Estimate a, Estimate b, Estimate union) {
        double n = Math.max(0, a.estimate() + b.estimate() - union.estimate());
        double se =
                Math.sqrt(
                        a.standardError() * a.standardError()
                                + b.standardError() * b.standardError()
                                + union.standardError() * union.standardError());
        return new Estimate(
                n,
                se,
                union.setCells(),
                union.cells(),
                union.hashes(),
                a.valid() && b.valid() && union.valid(),
                a.saturated() || b.saturated() || union.saturated());
    }
}
