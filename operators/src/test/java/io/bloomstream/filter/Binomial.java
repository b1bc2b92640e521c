package io.bloomstream.filter;

/** Binomial bounds for statistical assertions. */
final class Binomial {

    /**
     * z for the bounds: a two-sided normal tail of 4.5 sigma has probability 6.8e-6, so across the
     * few dozen statistical checks of the suite a failure means a bug, not bad luck (and the seeds
     * are fixed, so a run is repeatable).
     */
    static final double Z = 4.5;

    private Binomial() {}

    /** The half-width of the z-sigma interval of a Binomial(trials, p) count. */
    static double halfWidth(long trials, double p) {
        return Z * Math.sqrt(trials * p * (1 - p));
    }

    /** Whether {@code count} is within the z-sigma interval around trials * p. */
    static boolean within(long count, long trials, double p) {
        return Math.abs(count - trials * p) <= halfWidth(trials, p);
    }

    /** Whether {@code count} is at most trials * p plus the z-sigma half-width. */
    static boolean atMost(long count, long trials, double p) {
        return count <= trials * p + halfWidth(trials, p);
    }
}
