package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.io.LineParser;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link EventTimes}: the reason a time too far ahead of the wall clock is rejected with
 * hints at microseconds or nanoseconds only for a number that looks like one.
 */
class EventTimesTest {

    private static final Duration DAY = Duration.ofDays(1);

    /** The reason the parser rejects {@code ts} with, as the source gave it no timestamp. */
    private static String rejected(String ts) {
        LineParser.TimedRecordParser parser =
                EventTimes.parser(
                        new LineParser(LineParser.Format.JSON, null, List.of("id", "ts")),
                        "ts",
                        DAY);
        String line = "{\"id\":\"a\",\"ts\":" + ts + "}";
        Throwable t = null;
        try {
            parser.parse(line, Long.MIN_VALUE);
        } catch (LineParser.BadRecord e) {
            t = e;
        }
        assertThat(t).as(line).isNotNull();
        return t.getMessage();
    }

    @Test
    void anIsoTimeFarAheadGetsNoHintAtTheUnit() {
        long year2999 = Instant.parse("2999-01-01T00:00:00Z").toEpochMilli();
        assertThat(rejected("\"2999-01-01T00:00:00Z\""))
                .isEqualTo(
                        "time field 'ts' is "
                                + year2999
                                + " (2999-01-01T00:00:00Z), more than --max-future-time 1d"
                                + " ahead of the wall clock when read");
        // nor does an ISO time past the year 9999, nor milliseconds of the year 2999
        assertThat(rejected("\"+12000-01-01T00:00:00Z\"")).doesNotContain("microseconds");
        assertThat(rejected(String.valueOf(year2999))).doesNotContain("microseconds");
    }

    @Test
    void aNumberInMicrosecondsOrNanosecondsGetsTheHint() {
        long t0 = Instant.parse("2020-01-01T00:00:00Z").toEpochMilli();
        assertThat(rejected(String.valueOf(t0 * 1000)))
                .startsWith("time field 'ts' is " + t0 * 1000 + " (")
                .endsWith(
                        "more than --max-future-time 1d ahead of the wall clock when read (a time"
                                + " in microseconds or nanoseconds?)");
        assertThat(rejected(String.valueOf(t0 * 1_000_000))).contains("microseconds");
        // microseconds of 1978 are the first past the year 9999 in milliseconds
        assertThat(EventTimes.looksLikeAnotherUnit("253402300800000", 253402300800000L)).isTrue();
        assertThat(EventTimes.looksLikeAnotherUnit("253402300799999", 253402300799999L)).isFalse();
    }
}
