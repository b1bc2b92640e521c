package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dedup --time-field} over files: lateness decided by the lines before each event (a
 * watermark after each record), the same on every run.
 */
class EventTimeFilesTest {

    @TempDir Path tmp;

    @Test
    void aSmallFileGivesTheSameLateEventsOnEveryRunAndLogsThemAsLateNotRejected() throws Exception {
        // seconds; bound 5 s: late means more than 5 s older than the newest time before it
        String[][] events = {
            {"a", "10"}, {"b", "20"}, {"c", "30"}, {"d", "100"}, {"e", "50"}, // e: late
            {"f", "96"}, {"g", "101"}, {"h", "90"}, {"a", "102"}, {"i", "103"} // h late, a dup
        };
        List<String> lines = new ArrayList<>();
        for (String[] e : events) {
            lines.add("{\"id\":\"" + e[0] + "\",\"ts\":" + Long.parseLong(e[1]) * 1000 + "}");
        }
        Path in = tmp.resolve("events.json");
        Files.write(in, lines);
        for (int run = 0; run < 3; run++) {
            Path out = tmp.resolve("out" + run);
            Path log = tmp.resolve("run" + run + ".log");
            Cli cli = new Cli();
            assertThat(
                            cli.run(
                                    "dedup",
                                    "--input",
                                    in.toString(),
                                    "--output",
                                    out.toString(),
                                    "--format",
                                    "json",
                                    "--id-field",
                                    "id",
                                    "--time-field",
                                    "ts",
                                    "--retention",
                                    "1h",
                                    "--max-out-of-orderness",
                                    "5s",
                                    "--expected-items",
                                    "100",
                                    "--quiet",
                                    "--log-file",
                                    log.toString()))
                    .as(cli.err.toString())
                    .isZero();
            List<String> ids = new ArrayList<>();
            for (String line : Cli.readParts(out)) {
                ids.add((String) Cli.json(line).get("id"));
            }
            assertThat(ids)
                    .as("run %d", run)
                    .containsExactlyInAnyOrder("a", "b", "c", "d", "f", "g", "i");
            List<String> late = new ArrayList<>();
            for (String line : Cli.readParts(out.resolve("_rejected"))) {
                assertThat(line).contains("late: event time at or before the watermark");
                late.add(line.substring(line.indexOf("\\\"id\\\":\\\"") + 9).substring(0, 1));
            }
            assertThat(late).as("run %d", run).containsExactlyInAnyOrder("e", "h");
            String logged = Files.readString(log);
            assertThat(logged)
                    .doesNotContain("Rejected event (late")
                    .contains("Late event, to the late output (late: timestamp ");
        }
    }

    /**
     * One time in microseconds (thousands of years ahead) among times of 2020: rejected with its
     * reason, and every later event judged as before (without the bound it moved the watermark to
     * its time and every later event was late). Any wall clock between 2020 and the year 50,000
     * gives the same result under the default bound of one day.
     */
    @Test
    void aTimeFarAheadOfTheClockIsRejectedAndDoesNotEndEventTime() throws Exception {
        long t0 = java.time.Instant.parse("2020-01-01T00:00:00Z").toEpochMilli();
        List<String> lines = new ArrayList<>();
        lines.add("{\"id\":\"a\",\"ts\":" + t0 + "}");
        lines.add("{\"id\":\"micros\",\"ts\":" + (t0 + 1000) * 1000 + "}");
        lines.add("{\"id\":\"b\",\"ts\":" + (t0 + 2000) + "}");
        lines.add("{\"id\":\"a\",\"ts\":" + (t0 + 3000) + "}"); // a duplicate
        lines.add("{\"id\":\"c\",\"ts\":" + (t0 + 4000) + "}");
        Path in = tmp.resolve("events.json");
        Files.write(in, lines);
        Path out = tmp.resolve("out");
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                in.toString(),
                                "--output",
                                out.toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "id",
                                "--time-field",
                                "ts",
                                "--retention",
                                "1h",
                                "--expected-items",
                                "100",
                                "--quiet",
                                "--log-file",
                                tmp.resolve("run.log").toString()))
                .as(cli.err.toString())
                .isZero();
        List<String> ids = new ArrayList<>();
        for (String line : Cli.readParts(out)) {
            ids.add((String) Cli.json(line).get("id"));
        }
        assertThat(ids).containsExactlyInAnyOrder("a", "b", "c");
        List<String> rejected = Cli.readParts(out.resolve("_rejected"));
        assertThat(rejected).hasSize(1);
        assertThat((String) Cli.json(rejected.get(0)).get("reason"))
                .startsWith("time field 'ts' is " + (t0 + 1000) * 1000 + " (")
                .contains("more than --max-future-time 1d ahead of the wall clock");
        assertThat((String) Cli.json(rejected.get(0)).get("record")).contains("micros");
    }

    @Test
    void maxFutureTimeNeedsATimeField() {
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                "x",
                                "--output",
                                tmp.resolve("o").toString(),
                                "--max-future-time",
                                "1h"))
                .isNotZero();
        assertThat(cli.err.toString()).contains("--max-future-time needs --time-field");
    }

    @Test
    void helpSaysLateEventsAreTheOnesBehindTheWatermark() {
        Cli cli = new Cli();
        assertThat(cli.run("dedup", "--help")).isZero();
        String help = cli.out.toString().replaceAll("\\s+", " ");
        assertThat(help)
                .doesNotContain("later than the watermark")
                .contains("at or before the watermark");
    }
}
