package io.bloomstream.jobs.io;

import java.time.Duration;
import picocli.CommandLine;

/** The command line's durations: 500ms, 30s, 5m, 24h, 7d or ISO-8601 (PT24H). */
public final class Durations {

    private Durations() {}

    /** Parses durations such as 500ms, 30s, 5m, 24h, 7d or ISO-8601 (PT24H). */
    public static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return parseDuration(value);
        }
    }

    /** See {@link DurationConverter}. */
    public static Duration parseDuration(String value) {
        String v = value.trim().toLowerCase(java.util.Locale.ROOT);
        try {
            if (v.startsWith("p")) {
                return Duration.parse(value.trim().toUpperCase(java.util.Locale.ROOT));
            }
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)").matcher(v);
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                switch (m.group(2)) {
                    case "ms":
                        return Duration.ofMillis(n);
                    case "s":
                        return Duration.ofSeconds(n);
                    case "m":
                        return Duration.ofMinutes(n);
                    case "h":
                        return Duration.ofHours(n);
                    default:
                        return Duration.ofDays(n);
                }
            }
        } catch (RuntimeException e) {
            // reported below
        }
        throw new CommandLine.TypeConversionException(
                "'" + value + "' is not a duration (e.g. 500ms, 30s, 5m, 24h, 7d, PT24H)");
    }
}
