package io.bloomstream.jobs.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.io.InputProgress;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Tests for {@link Progress}. */
class ProgressTest {

    @Test
    void formatsRecordsRateShareAndTimeLeft() {
        assertThat(Progress.format(1_234_567, 245_310.4, 512L << 20, 1L << 30, 50e6, false))
                .isEqualTo(
                        "progress: 1,234,567 records, 245,310/s, 50% of 1.00 GiB, about 11 s left");
        assertThat(Progress.format(30_000, 8_356, 450_000, 450_000, 1e5, true))
                .isEqualTo("progress: 30,000 records, 8,356/s, 100% of 439.45 KiB, done");
        // Kafka: no size, no share
        assertThat(Progress.format(42, 7, 0, -1, Double.NaN, false))
                .isEqualTo("progress: 42 records, 7/s");
        assertThat(Progress.duration(75)).isEqualTo("1 min 15 s");
        assertThat(Progress.duration(7300)).isEqualTo("2 h 01 min");
    }

    @Test
    void onATerminalRewritesOneLineAndErasesItAtTheEnd() throws Exception {
        InputProgress input = InputProgress.of("progress-test-terminal");
        StringWriter text = new StringWriter();
        CountDownLatch ticks = new CountDownLatch(3);
        try (Progress p =
                Progress.start(
                        new PrintWriter(text),
                        input,
                        1000,
                        true,
                        Duration.ofMillis(5),
                        () -> {
                            input.add(10, 100);
                            ticks.countDown();
                        })) {
            assertThat(ticks.await(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            InputProgress.remove("progress-test-terminal");
        }
        String out = text.toString();
        assertThat(out).startsWith("\rprogress: ").doesNotContain("\n");
        assertThat(out).matches("(?s).*\r *\r$"); // erased: spaces over the line, back to its start
    }

    @Test
    void elsewherePrintsLinesAndALastOneWithTheTotals() throws Exception {
        InputProgress input = InputProgress.of("progress-test-lines");
        StringWriter text = new StringWriter();
        // a tick's line is printed before the next tick starts: three ticks, two lines at least
        CountDownLatch ticks = new CountDownLatch(3);
        try (Progress p =
                Progress.start(
                        new PrintWriter(text),
                        input,
                        -1,
                        false,
                        Duration.ofMillis(5),
                        () -> {
                            input.add(10, 0);
                            ticks.countDown();
                        })) {
            assertThat(ticks.await(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            InputProgress.remove("progress-test-lines");
        }
        String[] lines = text.toString().split("\n");
        assertThat(lines.length).isGreaterThanOrEqualTo(3); // two tick lines, and the last
        assertThat(lines).allMatch(l -> l.matches("progress: [0-9,]+ records, [0-9,]+/s"));
        assertThat(lines[lines.length - 1])
                .startsWith("progress: " + String.format("%,d", input.records()));
    }

    @Test
    void printsNothingWhenTheRunEndsBeforeTheFirstInterval() {
        InputProgress input = InputProgress.of("progress-test-short");
        StringWriter text = new StringWriter();
        Progress.start(new PrintWriter(text), input, -1, false, Duration.ofHours(1), () -> {})
                .close();
        InputProgress.remove("progress-test-short");
        assertThat(text.toString()).isEmpty();
    }
}
