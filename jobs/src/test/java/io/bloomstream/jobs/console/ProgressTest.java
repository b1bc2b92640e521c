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
        // the first line that saw records starts the rate
        assertThat(lines).allMatch(l -> l.matches("progress: [0-9,]+ records(, [0-9,]+/s)?"));
        assertThat(lines[lines.length - 1]).matches(".*/s");
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

    private static final long SECOND = 1_000_000_000L;
    private static final long MB = 1_000_000L;

    /** A progress line over {@code input} on a clock the test moves, with no thread of its own. */
    private static Progress onFakeClock(
            StringWriter text, InputProgress input, long totalBytes, long[] now) {
        return new Progress(
                new PrintWriter(text),
                input,
                totalBytes,
                false,
                Progress.LINE_INTERVAL,
                () -> {},
                () -> now[0]);
    }

    @Test
    void theTimeLeftCountsFromWhenReadingBeganNotFromTheStart() {
        // the job starts for 4 s, then reads 100 MB/s of 10 GB: 1 s of reading by the first line
        InputProgress input = InputProgress.of("progress-test-eta");
        StringWriter text = new StringWriter();
        long[] now = {0};
        try {
            Progress p = onFakeClock(text, input, 10_000 * MB, now);
            now[0] = 5 * SECOND;
            input.add(1_000_000, 100 * MB);
            // the first line that saw records: the rates start here, none to show yet
            assertThat(p.line(false)).isEqualTo("progress: 1,000,000 records, 1% of 9.31 GiB");
            now[0] = 10 * SECOND;
            input.add(5_000_000, 500 * MB);
            // 94 s left at 100 MB/s (a rate from time 0 said 4 min 21 s, then 3 min 19 s)
            assertThat(p.line(false))
                    .isEqualTo(
                            "progress: 6,000,000 records, 1,000,000/s, 6% of 9.31 GiB, about 1 min"
                                    + " 34 s left");
            now[0] = 15 * SECOND;
            input.add(5_000_000, 500 * MB);
            assertThat(p.line(false)).endsWith(", 11% of 9.31 GiB, about 1 min 29 s left");
        } finally {
            InputProgress.remove("progress-test-eta");
        }
    }

    @Test
    void aLineEveryFiveSecondsFollowsARateThatRampsUp() {
        // reading warms up: 50 MB/s, then 100 MB/s, of 10 GB
        InputProgress input = InputProgress.of("progress-test-ramp");
        StringWriter text = new StringWriter();
        long[] now = {0};
        try {
            Progress p = onFakeClock(text, input, 10_000 * MB, now);
            now[0] = 5 * SECOND;
            input.add(1, 100 * MB);
            p.line(false);
            now[0] = 10 * SECOND;
            input.add(1, 250 * MB);
            p.line(false);
            now[0] = 15 * SECOND;
            input.add(1, 500 * MB);
            // 9,150 MB left at 95.9 MB/s (weight 1 - e^-2.5 on the last 5 s); a weight of 0.2 a
            // line said 60 MB/s: 2 min 33 s
            assertThat(p.line(false)).endsWith(", 8% of 9.31 GiB, about 1 min 36 s left");
        } finally {
            InputProgress.remove("progress-test-ramp");
        }
    }

    @Test
    void aStoppedRunPrintsNoLastLineAndOnlyAFullReadSaysDone() {
        InputProgress input = InputProgress.of("progress-test-stop");
        long[] now = {0};
        try {
            // stopped with its state saved at 30%: the job reads on until the savepoint, so no
            // last line (it would say neither the summary's count nor "done")
            StringWriter stopped = new StringWriter();
            Progress p = onFakeClock(stopped, input, 1_000 * MB, now);
            now[0] = 5 * SECOND;
            input.add(3_000, 300 * MB);
            p.tick();
            p.stopping();
            input.add(1_000, 100 * MB);
            p.close(); // a second stop does nothing
            assertThat(stopped.toString())
                    .isEqualTo("progress: 3,000 records, 30% of 953.67 MiB\n");

            // a run that failed at 40%: its last line has the totals, not "done"
            StringWriter failed = new StringWriter();
            Progress q = onFakeClock(failed, input, 1_000 * MB, now);
            now[0] = 10 * SECOND;
            q.tick();
            now[0] = 20 * SECOND;
            q.close();
            assertThat(failed.toString().lines())
                    .last()
                    .isEqualTo("progress: 4,000 records, 267/s, 40% of 953.67 MiB");

            // read to the end: "done"
            StringWriter full = new StringWriter();
            Progress r = onFakeClock(full, input, 1_000 * MB, now);
            now[0] = 25 * SECOND;
            r.tick();
            input.add(6_000, 600 * MB);
            now[0] = 30 * SECOND;
            r.close();
            assertThat(full.toString().lines())
                    .last()
                    .isEqualTo("progress: 10,000 records, 1,000/s, 100% of 953.67 MiB, done");
        } finally {
            InputProgress.remove("progress-test-stop");
        }
    }
}
