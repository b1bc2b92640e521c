package io.bloomstream.jobs.stream;

import io.bloomstream.flink.EventTimeBound;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Event time for the jobs: a JSON time field in epoch milliseconds or ISO-8601, and watermarks that
 * trail the newest time seen by a bound.
 */
final class EventTimes {

    /** The reason written to {@code _rejected} for events behind the watermark. */
    static final String LATE_REASON = "late: event time at or before the watermark";

    private EventTimes() {}

    /**
     * A parser that requires the id and a readable time field (the second value); the source's
     * timestamp assigner reads the same field into the record's timestamp, and gives none to a time
     * more than {@code --max-future-time} ahead of the wall clock (decided once, there, so the
     * watermark never sees it): such a record is rejected here with that reason.
     *
     * @param maxFutureTime the bound, for the reason's text
     */
    static LineParser.TimedRecordParser parser(
            LineParser parser, String timeField, Duration maxFutureTime) {
        return (line, timestamp) -> {
            Parsed p = parser.parseComplete(line);
            long time = parseTime(p.values[1], timeField);
            if (!io.bloomstream.flink.internal.EventTimes.isTimestamp(timestamp)) {
                throw new LineParser.BadRecord(
                        futureReason(timeField, p.values[1], time, maxFutureTime));
            }
            return p;
        };
    }

    /**
     * The reason written to {@code _rejected} for a time too far ahead of the wall clock, read from
     * {@code text}; with a hint at the unit when the time {@link #looksLikeAnotherUnit looks like
     * one}.
     */
    static String futureReason(String timeField, String text, long time, Duration maxFutureTime) {
        return "time field '"
                + timeField
                + "' is "
                + time
                + " ("
                + Instant.ofEpochMilli(time)
                + "), more than --max-future-time "
                + text(maxFutureTime)
                + " ahead of the wall clock when read"
                + (looksLikeAnotherUnit(text, time)
                        ? " (a time in microseconds or nanoseconds?)"
                        : "");
    }

    /** The last instant an ISO-8601 time with a four-digit year names. */
    static final long LAST_FOUR_DIGIT_YEAR =
            Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli();

    /**
     * Whether a time read from {@code text} looks like one in another unit than milliseconds: a
     * number past the year 9999, as epoch microseconds of any time since 1978 and nanoseconds since
     * 1970 are. An ISO-8601 time (the year 2999, say) is in no unit, and a number of milliseconds
     * in the next few thousand years may be meant (a far deadline, a test's sentinel).
     */
    static boolean looksLikeAnotherUnit(String text, long time) {
        if (time <= LAST_FOUR_DIGIT_YEAR || text == null) {
            return false;
        }
        try {
            Long.parseLong(text.trim());
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** A duration as the flags take it: 1d, 36h, 90m, 5s or 250ms. */
    static String text(Duration d) {
        long ms = d.toMillis();
        long[] units = {86_400_000L, 3_600_000L, 60_000L, 1000L};
        String[] names = {"d", "h", "m", "s"};
        for (int i = 0; i < units.length; i++) {
            if (ms != 0 && ms % units[i] == 0) {
                return ms / units[i] + names[i];
            }
        }
        return ms + "ms";
    }

    /**
     * Epoch milliseconds (an integer) or an ISO-8601 instant with an offset ({@code
     * 2026-11-23T10:15:30.250Z}, {@code 2026-11-23T11:15:30+01:00}).
     */
    static long parseTime(String text, String field) throws LineParser.BadRecord {
        String t = text.trim();
        if (!t.isEmpty() && (Character.isDigit(t.charAt(0)) || t.charAt(0) == '-')) {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                // an ISO date starts with a digit too
            }
        }
        try {
            return Instant.parse(t).toEpochMilli();
        } catch (DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(t).toInstant().toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e2) {
                throw new LineParser.BadRecord(
                        "bad time field '"
                                + field
                                + "': "
                                + text
                                + " (epoch milliseconds or ISO-8601 with offset)");
            }
        } catch (ArithmeticException e) {
            throw new LineParser.BadRecord("time field '" + field + "' out of range: " + text);
        }
    }

    /**
     * Timestamps read from the raw line's time field (lines without a readable one, or with a time
     * {@code bound} refuses, get none that counts: they are rejected by the parser after the
     * source, and the watermark never sees them), watermarks {@code maxOutOfOrderness} behind the
     * newest time of each split (newest - bound - 1 ms, so an event more than the bound behind it
     * is late).
     *
     * @param afterEachRecord emit the watermark after each record (files: every run of the same
     *     file judges the same events late), instead of periodically (Kafka: an unbounded stream,
     *     where lateness is a matter of arrival anyway)
     */
    static WatermarkStrategy<String> watermarks(
            LineParser.Format format,
            String timeField,
            Duration maxOutOfOrderness,
            boolean afterEachRecord,
            EventTimeBound bound) {
        LineParser time = new LineParser(format, null, java.util.List.of(timeField));
        WatermarkStrategy<String> strategy =
                afterEachRecord
                        ? WatermarkStrategy.forGenerator(
                                ctx -> new AfterEachRecord(maxOutOfOrderness.toMillis()))
                        : WatermarkStrategy.<String>forBoundedOutOfOrderness(maxOutOfOrderness);
        return bound.guard(
                strategy.withTimestampAssigner(
                        (line, previous) -> {
                            try {
                                String value = time.parse(line).values[0];
                                return value == null ? Long.MIN_VALUE : parseTime(value, timeField);
                            } catch (LineParser.BadRecord e) {
                                return Long.MIN_VALUE;
                            }
                        }));
    }

    /**
     * A watermark {@code bound} behind the newest timestamp, emitted after each record that moves
     * it: the records and watermarks of a file then follow the file's order, so whether an event is
     * late depends on the lines before it alone, not on when a periodic watermark happens to fire.
     * Records without a timestamp ({@code Long.MIN_VALUE}) leave it where it is.
     */
    static final class AfterEachRecord implements WatermarkGenerator<String> {
        private final long bound;
        private long newest = Long.MIN_VALUE;
        private long emitted = Long.MIN_VALUE;

        AfterEachRecord(long bound) {
            this.bound = bound;
        }

        @Override
        public void onEvent(String event, long timestamp, WatermarkOutput output) {
            if (timestamp == Long.MIN_VALUE || timestamp <= newest) {
                return;
            }
            newest = timestamp;
            long watermark =
                    newest < Long.MIN_VALUE + bound + 1 ? Long.MIN_VALUE : newest - bound - 1;
            if (watermark > emitted) {
                emitted = watermark;
                output.emitWatermark(new Watermark(watermark));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            // every watermark is emitted with its record
        }
    }
}
