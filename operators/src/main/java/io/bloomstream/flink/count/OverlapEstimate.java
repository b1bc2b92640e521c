package io.bloomstream.flink.count;

import org.apache.flink.annotation.PublicEvolving;

/**
 * Set estimates of one key between two streams A and B ({@link BloomOverlap}). |A ∪ B| comes from
 * the OR of the two filters, |A ∩ B| = |A| + |B| − |A ∪ B|; the intersection's standard error adds
 * the three variances, so a small intersection of large sets has a large relative error. A POJO.
 */
@PublicEvolving
public class OverlapEstimate {
    /** The key. */
    public String key;

    /** |A| and its standard error. */
    public double a;

    /** See {@link #a}. */
    public double aError;

    /** |B| and its standard error. */
    public double b;

    /** See {@link #b}. */
    public double bError;

    /** |A ∪ B| and its standard error. */
    public double union;

    /** See {@link #union}. */
    public double unionError;

    /** |A ∩ B| (at least 0) and its standard error. */
    public double intersection;

    /** See {@link #intersection}. */
    public double intersectionError;

    /**
     * Whether all three estimates are valid: no filter saturated, and both sides' filters have one
     * shape (else union and intersection are NaN; see {@link BloomOverlap}).
     */
    public boolean valid;

    /** Whether this is the key's record at the end of input. */
    public boolean isFinal;

    /** The emission time. */
    public long timestamp;

    /** For Flink's POJO serializer. */
    public OverlapEstimate() {}

    @Override
    public String toString() {
        return String.format(
                java.util.Locale.ROOT,
                "%s: |A|=%.1f |B|=%.1f |A∪B|=%.1f±%.1f |A∩B|=%.1f±%.1f%s",
                key,
                a,
                b,
                union,
                unionError,
                intersection,
                intersectionError,
                valid ? "" : " INVALID");
    }
}
