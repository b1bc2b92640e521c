package io.bloomstream.jobs.io;

import java.math.BigDecimal;
import java.util.Locale;
import picocli.CommandLine;

/**
 * Counts as people write them: {@code 80000000000}, {@code 80_000_000_000}, {@code 1e11}, {@code
 * 2.5k}, {@code 100M}, {@code 3G} (or {@code 3B}, billions), {@code 1T}. The suffixes are decimal
 * (k = 10^3, M = 10^6, G and B = 10^9, T = 10^12) and case-insensitive; the value must be a whole
 * number once scaled ({@code 2.5k} is 2500; {@code 1.5} is refused).
 */
public final class Counts {

    private Counts() {}

    /** The count {@code text} stands for; a {@link CommandLine.TypeConversionException} if none. */
    public static long parse(String text) {
        String t = text.trim().replace("_", "");
        BigDecimal scale = BigDecimal.ONE;
        if (!t.isEmpty()) {
            switch (t.substring(t.length() - 1).toLowerCase(Locale.ROOT)) {
                case "k":
                    scale = BigDecimal.TEN.pow(3);
                    break;
                case "m":
                    scale = BigDecimal.TEN.pow(6);
                    break;
                case "g":
                case "b":
                    scale = BigDecimal.TEN.pow(9);
                    break;
                case "t":
                    scale = BigDecimal.TEN.pow(12);
                    break;
                default:
                    break;
            }
            if (scale != BigDecimal.ONE) {
                t = t.substring(0, t.length() - 1).trim();
            }
        }
        BigDecimal value;
        try {
            value = new BigDecimal(t).multiply(scale);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException(
                    "'" + text + "' is not a count (e.g. 100000, 1e11, 2.5k, 100M, 3G)");
        }
        try {
            return value.stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            throw new CommandLine.TypeConversionException(
                    "'"
                            + text
                            + "' is not a whole count that fits in a long (at most "
                            + Long.MAX_VALUE
                            + ")");
        }
    }

    /** A picocli converter for count options, see {@link Counts}. */
    public static final class Converter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return parse(value);
        }
    }
}
