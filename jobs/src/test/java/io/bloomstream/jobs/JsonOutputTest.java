package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --json}: every command's result, and its failure, as one JSON object on stdout. */
class JsonOutputTest {

    @TempDir Path tmp;

    @Test
    void aFailedJobWithJsonPrintsTheErrorAndTheLogFileOnStdoutAndExitsWithOne() throws Exception {
        // not a filter file: the job fails as it opens it (a missing one is a usage error)
        Path broken = Files.writeString(tmp.resolve("broken.bloom"), "not a filter\n");
        Cli cli = new Cli();
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
                        "--quiet",
                        "--json");
        assertThat(status).isEqualTo(1);
        Map<String, Object> json = Cli.json(cli.out.toString());
        assertThat(json)
                .containsEntry("command", "screen")
                .containsEntry("status", "failed")
                .containsEntry("exit_status", 1L);
        assertThat((String) json.get("error")).startsWith("job failed: ");
        assertThat(Path.of((String) json.get("log_file"))).exists();
    }

    @Test
    void aFailedToolWithJsonPrintsTheErrorOnStdout() throws Exception {
        Cli cli = new Cli();
        Path missing = tmp.resolve("missing.bloom");
        assertThat(cli.run("inspect", "--filter", missing.toString(), "--json")).isEqualTo(1);
        Map<String, Object> json = Cli.json(cli.out.toString());
        assertThat(json)
                .containsEntry("command", "inspect")
                .containsEntry("error", missing + ": no such file")
                .containsEntry("log_file", null)
                .containsEntry("exit_status", 1L);
        Cli usage = new Cli();
        assertThat(usage.run("plan", "--expected-items", "0", "--fpp", "0.01", "--json"))
                .isEqualTo(2);
        assertThat(Cli.json(usage.out.toString()))
                .containsEntry("command", "plan")
                .containsEntry("exit_status", 2L);
    }

    @Test
    void planBuildFilterAndQueryAcceptJson() throws Exception {
        Cli plan = new Cli();
        assertThat(plan.run("plan", "--expected-items", "1000000", "--fpp", "0.01", "--json"))
                .as(plan.err.toString())
                .isZero();
        Map<String, Object> sizing = Cli.json(plan.out.toString());
        assertThat(sizing)
                .containsEntry("expected_items", 1_000_000L)
                .containsEntry("target_fpp", 0.01)
                .containsKeys("bits", "hashes", "bytes", "layout", "theoretical_fpp");
        Cli text = new Cli();
        assertThat(text.run("plan", "--expected-items", "1000000", "--fpp", "0.01")).isZero();
        assertThat(text.out.toString())
                .contains("bits (m)          " + sizing.get("bits"))
                .contains("hashes (k)        " + sizing.get("hashes"));

        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("Alice@Example.com", "bob@example.com", ""));
        Path filter = tmp.resolve("f.bloom");
        Cli build = new Cli();
        assertThat(
                        build.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.000001",
                                "--normalize",
                                "email",
                                "--json"))
                .as(build.err.toString())
                .isZero();
        assertThat(Cli.json(build.out.toString()))
                .containsEntry("output", filter.toString())
                .containsEntry("type", "bloom")
                .containsEntry("normalization", "email")
                .containsEntry("entries_added", 2L)
                .containsEntry("lines_skipped", 1L)
                .containsEntry("bytes", Files.size(filter));

        Path probe = tmp.resolve("probe.txt");
        Files.write(probe, List.of("ALICE@example.com", "carol@example.com", "not an address"));
        Path hits = tmp.resolve("hits.txt");
        Cli query = new Cli();
        assertThat(
                        query.run(
                                "query",
                                "--filter",
                                filter.toString(),
                                "--input",
                                probe.toString(),
                                "--output",
                                hits.toString(),
                                "--json"))
                .as(query.err.toString())
                .isZero();
        assertThat(Cli.json(query.out.toString()))
                .containsEntry("lines", 3L)
                .containsEntry("might_be_in_filter", 1L)
                .containsEntry("unusable", 1L);
        assertThat(Files.readAllLines(hits)).containsExactly("ALICE@example.com");
        Cli noOutput = new Cli();
        assertThat(
                        noOutput.run(
                                "query",
                                "--filter",
                                filter.toString(),
                                "--input",
                                probe.toString(),
                                "--json"))
                .isEqualTo(2);
        assertThat(noOutput.err.toString()).contains("give --output for the lines");
    }
}
