package io.bloomstream.jobs.io;

import java.math.BigDecimal;
import java.util.Locale;
import picocli.CommandLine;

/**
 * False-positive rates as people write them: {@code 0.01}, {@code 1e-3}, or a percentage, {@code
 * 1%} (0.01) or {@code 0.1%}. A rate is in (0, 1); a value from 1 to 100 is refused with the rate
 * it most likely meant ({@code --fpp 1}: did you mean 0.01, 1%?).
 */
public final class Rates {

    /** At or above this rate, a command warns ({@link #warning}). */
    public static final double HIGH = 0.1;

    private Rates() {}

    /** The rate {@code text} stands for; a {@link CommandLine.TypeConversionException} if none. */
    public static double parse(String text) {
        String t = text.trim();
        boolean percent = t.endsWith("%");
        if (percent) {
            t = t.substring(0, t.length() - 1).trim();
        }
        BigDecimal value;
        try {
            value = new BigDecimal(t);
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException(
                    "'" + text + "' is not a rate (e.g. 0.01, 1e-3 or 1%)");
        }
        if (percent) {
            value = value.movePointLeft(2);
        }
        if (value.signum() > 0 && value.compareTo(BigDecimal.ONE) < 0) {
            return value.doubleValue();
        }
        String refused = "'" + text + "' is not a rate between 0 and 1 (exclusive)";
        if (!percent
                && value.compareTo(BigDecimal.ONE) >= 0
                && value.compareTo(BigDecimal.valueOf(100)) < 0) {
            BigDecimal meant = value.movePointLeft(2).stripTrailingZeros();
            throw new CommandLine.TypeConversionException(
                    refused
                            + ": did you mean "
                            + meant.toPlainString()
                            + " ("
                            + value.stripTrailingZeros().toPlainString()
                            + "%)?");
        }
        throw new CommandLine.TypeConversionException(refused + " (e.g. 0.01, 1e-3 or 1%)");
    }

    /**
     * The warning for a rate of {@code option} at or above {@link #HIGH}, or null: a rate that high
     * is more likely a slip (a percentage written as a fraction) than meant.
     */
    public static String warning(String option, double rate) {
        if (!(rate >= HIGH)) {
            return null;
        }
        return String.format(
                Locale.ROOT,
                "%s %s is a high rate: one answer in %d that says \"seen\" or \"listed\" is wrong"
                        + " (1%% is %s 0.01 or 1%%)",
                option,
                BigDecimal.valueOf(rate).stripTrailingZeros().toPlainString(),
                Math.round(1 / rate),
                option);
    }

    /**
     * What a rate of {@code option} at or above {@link #HIGH} costs in exact mode, or null: no
     * answer is wrong there, but each false positive of the filter, about that share of the new
     * ids, costs a read of the exact entries in state.
     */
    public static String exactNote(String option, double rate) {
        if (!(rate >= HIGH)) {
            return null;
        }
        return String.format(
                Locale.ROOT,
                "%s %s with --exact: no answer is wrong, but once the filter holds"
                        + " --expected-items ids, about %s of new ids are false positives of it,"
                        + " each costing a read of the exact entries in state (at %s 0.01, 1%%)",
                option,
                BigDecimal.valueOf(rate).stripTrailingZeros().toPlainString(),
                BigDecimal.valueOf(rate * 100).stripTrailingZeros().toPlainString() + "%",
                option);
    }

    /** A picocli converter for rate options, see {@link Rates}. */
    public static final class Converter implements CommandLine.ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            return parse(value);
        }
    }
}
