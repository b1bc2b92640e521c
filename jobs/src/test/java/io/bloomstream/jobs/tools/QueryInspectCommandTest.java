package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link QueryCommand} and {@link InspectCommand} on a file built by build-filter. */
class QueryInspectCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @Test
    void queryAndInspectReadAFilterFile() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("Alice@Example.com", "bob@example.com"));
        Path filter = tmp.resolve("f.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.000001",
                                "--normalize",
                                "email"))
                .isZero();
        Path probe = tmp.resolve("probe.txt");
        Files.write(probe, List.of("ALICE@example.com", "carol@example.com", "not an address"));
        Path hits = tmp.resolve("hits.txt");
        assertThat(
                        cli.run(
                                "query",
                                "--filter",
                                filter.toString(),
                                "--input",
                                probe.toString(),
                                "--output",
                                hits.toString()))
                .isZero();
        assertThat(Files.readAllLines(hits)).containsExactly("ALICE@example.com");
        assertThat(cli.err.toString()).contains("3 lines, 1 might be in the filter, 1 unusable");
        assertThat(cli.run("inspect", "--filter", filter.toString(), "--json")).isZero();
        Map<String, Object> json =
                Cli.json(cli.out.toString().substring(cli.out.toString().indexOf('{')));
        assertThat(json).containsEntry("normalization", "email").containsEntry("items_added", 2L);
        assertThat(json.get("estimated_items")).isEqualTo(2L);
        assertThat(cli.run("inspect", "--filter", list.toString())).isEqualTo(1);
        assertThat(cli.err.toString()).contains("not a valid filter file (field ");
    }

    @Test
    void queryCountsALineLongerThanTheCapAsUnusableAndReadsOn() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("alpha", "beta"));
        Path filter = tmp.resolve("f.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.000001"))
                .isZero();
        Path probe = tmp.resolve("probe.txt");
        // a 2 MiB line (past the 1 MiB default cap) between two listed ones, and a non-UTF-8 line
        Files.write(
                probe,
                ("alpha\n" + "x".repeat(2 << 20) + "\nbeta\n")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Files.write(probe, new byte[] {(byte) 0xff, '\n'}, java.nio.file.StandardOpenOption.APPEND);
        Path hits = tmp.resolve("hits.txt");
        assertThat(
                        cli.run(
                                "query",
                                "--filter",
                                filter.toString(),
                                "--input",
                                probe.toString(),
                                "--output",
                                hits.toString()))
                .as(cli.err.toString())
                .isZero();
        assertThat(Files.readAllLines(hits)).containsExactly("alpha", "beta");
        assertThat(cli.err.toString()).contains("4 lines, 2 might be in the filter, 2 unusable");
    }
}
