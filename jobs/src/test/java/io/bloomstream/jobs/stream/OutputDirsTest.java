package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.io.OutputDirs;
import io.bloomstream.jobs.io.StateDir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link OutputDirs}: a stream command refuses an output directory that holds an earlier
 * run's files (its ids would repeat across the runs), unless {@code --append} says so or the run
 * resumes the {@code --state-dir} that wrote it.
 */
class OutputDirsTest {

    @TempDir Path tmp;

    @Test
    void refusesANonEmptyOutputBeforeAnythingRuns() throws Exception {
        Path input = Files.writeString(tmp.resolve("in.txt"), "a\nb\na\n");
        Path out = Files.createDirectories(tmp.resolve("out"));
        Files.writeString(out.resolve("part-earlier-0.txt"), "a\n");
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "dedup",
                                "--quiet",
                                "--input",
                                input.toString(),
                                "--output",
                                out.toString()))
                .as(cli.err.toString())
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains(
                        "error: --output "
                                + out
                                + " is not empty (1 entry: part-earlier-0.txt): this run's part"
                                + " files would go beside an earlier run's")
                .contains("add --append");
        assertThat(Cli.readParts(out)).containsExactly("a");

        Cli append = new Cli();
        assertThat(
                        append.run(
                                "dedup",
                                "--quiet",
                                "--append",
                                "--input",
                                input.toString(),
                                "--output",
                                out.toString()))
                .as(append.err.toString())
                .isZero();
        assertThat(Cli.readParts(out)).containsExactlyInAnyOrder("a", "a", "b");
    }

    @Test
    void aStateDirectoryMayWriteAgainWhereItsRunsWrote() throws Exception {
        Path out = Files.createDirectories(tmp.resolve("out"));
        Files.writeString(out.resolve("part-x-0.txt"), "a\n");
        try (StateDir.Lock lock = StateDir.lock(tmp.resolve("state"))) {
            StateDir state = StateDir.open(tmp.resolve("state"), "dedup", Map.of());
            assertThat(OutputDirs.refusal("--output", out.toString(), false, state))
                    .startsWith("--output " + out + " is not empty (1 entry: part-x-0.txt)");
            state.recordOutputs(List.of(out.toString() + "/"));
            assertThat(OutputDirs.refusal("--output", out.toString(), false, state)).isNull();
            assertThat(OutputDirs.refusal("--output", tmp + "/./out", false, state)).isNull();
            assertThat(OutputDirs.refusal("--output", out.toString(), false, null)).isNotNull();
            assertThat(OutputDirs.refusal("--output", out.toString(), true, null)).isNull();
            assertThat(OutputDirs.refusal("--output", tmp.resolve("new").toString(), false, null))
                    .isNull();
        }
    }
}
