package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for what a local run prints: {@code io.bloomstream.jobs.console} (quiet logging, the
 * progress line, a failure in one line, the JSON summary).
 */
class RunConsoleTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    private String ids() {
        return Cli.testdata().resolve("dedup/ids.txt").toString();
    }

    private static List<String> lines(Object text) {
        return Arrays.stream(text.toString().split("\\R"))
                .filter(l -> !l.isEmpty())
                .collect(Collectors.toList());
    }

    @Test
    void aLocalRunPrintsTheSummaryAndNamesFlinksLogFile() throws Exception {
        Path log = tmp.resolve("logs/dedup.log");
        int status =
                cli.run(
                        "dedup",
                        "--input",
                        ids(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--log-file",
                        log.toString(),
                        "--quiet");
        assertThat(status).as(cli.err.toString()).isZero();
        List<String> err = lines(cli.err);
        assertThat(err).hasSize(3);
        assertThat(err.get(0))
                .startsWith("read 30000 records; wrote 11784 first occurrences to ")
                .endsWith(" ms)");
        assertThat(err.get(1)).startsWith("bloom-dedup: fullest filter ");
        assertThat(err.get(2)).isEqualTo("Flink's log: " + log);
        // Flink's chatter is in the file, with the warnings that used to reach the console.
        String logged = Files.readString(log);
        assertThat(logged).contains("org.apache.flink.runtime.minicluster.MiniCluster");
        assertThat(logged).contains("Name collision");
    }

    @Test
    void aFailedJobPrintsItsRootCauseInOneLineAndExitsWithOne() throws Exception {
        // not a filter file: the job fails as it opens it (a missing one is a usage error)
        Path broken =
                java.nio.file.Files.writeString(tmp.resolve("broken.bloom"), "not a filter\n");
        int status =
                cli.run(
                        "screen",
                        "--filter",
                        broken.toString(),
                        "--input",
                        Cli.testdata().resolve("spam/mails.jsonl").toString(),
                        "--format",
                        "json",
                        "--field",
                        "from",
                        "--output",
                        tmp.resolve("clean").toString(),
                        "--flagged-output",
                        tmp.resolve("flagged").toString(),
                        "--quiet");
        assertThat(status).isEqualTo(1);
        List<String> err = lines(cli.err);
        assertThat(err).as(cli.err.toString()).hasSize(2);
        assertThat(err.get(0))
                .isEqualTo(
                        "error: job failed: FilterFormatException: length: needs at least 44"
                                + " bytes, has 13: not a filter file");
        assertThat(err.get(1)).startsWith("Flink's log: ");
        assertThat(cli.err.toString()).doesNotContain("\tat ");
    }

    @Test
    void progressLinesCountTheRecordsAndBytesReadAndEndWithTheTotals() {
        int status =
                cli.run(
                        "dedup",
                        "--input",
                        ids(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--progress-interval",
                        "50ms");
        assertThat(status).as(cli.err.toString()).isZero();
        List<String> progress =
                lines(cli.err).stream()
                        .filter(l -> l.startsWith("progress: "))
                        .collect(Collectors.toList());
        // The job runs for far longer than 50 ms (the cluster alone takes a second to start).
        // Lines have a rate from the second one that saw records read on (the last one always).
        assertThat(progress).hasSizeGreaterThan(1);
        assertThat(progress)
                .allMatch(
                        l ->
                                l.matches(
                                        "progress: [0-9,]+ records(, [0-9,]+/s)?, \\d+% of"
                                                + " 439.45 KiB.*"),
                        "progress line format");
        assertThat(progress.get(progress.size() - 1))
                .matches("progress: 30,000 records, [0-9,]+/s, 100% of 439.45 KiB, done");
    }

    @Test
    void quietPrintsNoProgress() {
        int status =
                cli.run(
                        "dedup",
                        "--input",
                        ids(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--progress-interval",
                        "50ms",
                        "--quiet");
        assertThat(status).as(cli.err.toString()).isZero();
        assertThat(cli.err.toString()).doesNotContain("progress:");
    }

    @Test
    void jsonPrintsTheSummaryAsOneObjectOnStdout() throws Exception {
        int status =
                cli.run(
                        "dedup",
                        "--input",
                        ids(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--json",
                        "--quiet");
        assertThat(status).as(cli.err.toString()).isZero();
        assertThat(cli.err.toString()).isEmpty();
        var json = Cli.json(cli.out.toString());
        assertThat(json.get("records_in")).isEqualTo(30000L);
        assertThat(json.get("records_out")).isEqualTo(11784L);
        assertThat(json.get("records_rejected")).isEqualTo(0L);
        assertThat((String) json.get("log_file")).endsWith(".log");
        assertThat(json.get("filters")).asList().hasSize(1);
        assertThat(json.get("warnings")).asList().isEmpty();
    }

    @Test
    void verboseNamesNoLogFile() {
        int status =
                cli.run(
                        "dedup",
                        "--input",
                        ids(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--verbose",
                        "--quiet");
        assertThat(status).as(cli.err.toString()).isZero();
        List<String> err = lines(cli.err);
        assertThat(err).hasSize(2); // the log went to the console (System.err), not to a file
        assertThat(cli.err.toString()).doesNotContain("Flink's log:");
    }
}
