package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A distinct-count estimate of one key (of one window, in the windowed variant), emitted by {@link
 * BloomCount}. A POJO.
 *
 * <p>{@link #estimate} is n = m ln(m/m0) / k summed over the key's cascade stages (corrected for
 * the paged layout, see {@link Estimate}); {@link #lower} and {@link #upper} are three standard
 * errors either side. {@link #valid} and {@link #saturated} are those of {@link Estimate}, decided
 * relative to each stage's size (an empty or sparse filter, however small, is valid): a saturated
 * filter has no zero bit left, or so few (m0 &lt;= 3 sd(m0)) that the count has no upper bound, and
 * then estimate, lower and upper are NaN rather than a number that means nothing. An estimate that
 * is neither valid nor saturated (a few more zero bits, sd(m0) / m0 > 1/4) keeps its numbers.
 */
@PublicEvolving
public class CountEstimate {

    /** The key, as a string. */
    public String key;

    /** The estimated number of distinct items (NaN when saturated). */
    public double estimate;

    /** estimate - 3 standard errors, at least 0 (NaN when saturated). */
    public double lower;

    /** estimate + 3 standard errors (NaN when saturated). */
    public double upper;

    /** One standard error. */
    public double standardError;

    /** Bits set, summed over stages. */
    public long bitsSet;

    /** Bits (m), summed over stages. */
    public long bits;

    /** Hashes (k) of the newest stage. */
    public int hashes;

    /** bitsSet / bits. */
    public double fillRatio;

    /** Cascade stages. */
    public int stages;

    /** Whether the estimate can be trusted (see {@link Estimate#valid()}). */
    public boolean valid;

    /**
     * Whether the filter is too full to bound the count (see {@link Estimate#saturated()}; fixed
     * growth far past capacity). Implies not valid.
     */
    public boolean saturated;

    /** Whether this is the key's last record (end of input, or its window closed). */
    public boolean isFinal;

    /** The time the estimate refers to: the emission time, or the window end. */
    public long timestamp;

    /** The window start, or Long.MIN_VALUE for running counts. */
    public long windowStart = Long.MIN_VALUE;

    /** For Flink's POJO serializer. */
    public CountEstimate() {}

    static CountEstimate of(String key, Estimate e, int stages, long timestamp, boolean isFinal) {
        CountEstimate r = new CountEstimate();
        r.key = key;
        r.valid = e.valid();
        r.saturated = e.saturated();
        r.estimate = r.saturated ? Double.NaN : e.estimate();
        r.standardError = e.standardError();
        r.lower = r.saturated ? Double.NaN : e.lower();
        r.upper = r.saturated ? Double.NaN : e.upper();
        r.bitsSet = e.setCells();
        r.bits = e.cells();
        r.hashes = e.hashes();
        r.fillRatio = e.fillRatio();
        r.stages = stages;
        r.timestamp = timestamp;
        r.isFinal = isFinal;
        return r;
    }

    @Override
    public String toString() {
        return String.format(
                java.util.Locale.ROOT,
                "%s: %.1f [%.1f, %.1f] bits %d/%d k=%d stages=%d%s%s",
                key,
                estimate,
                lower,
                upper,
                bitsSet,
                bits,
                hashes,
                stages,
                saturated ? " SATURATED" : "",
                isFinal ? " final" : "");
    }
}
