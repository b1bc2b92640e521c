package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests that {@code screen}'s "rejected N" (text and {@code --json}) is the number of lines in
 * {@code _rejected}, whatever sent them there: a line that is not JSON, a record missing the
 * screened field, a bad update command.
 */
class ScreenRejectedTest {

    @TempDir Path tmp;

    private Path filter;
    private Path input;
    private Path updates;

    @BeforeEach
    void files() throws Exception {
        Path list = Files.writeString(tmp.resolve("list.txt"), "spam@x.com\n");
        filter = tmp.resolve("list.bloom");
        Cli build = new Cli();
        assertThat(
                        build.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--expected-items",
                                "100",
                                "--fpp",
                                "0.001"))
                .as(build.err.toString())
                .isZero();
        input =
                Files.write(
                        tmp.resolve("mails.jsonl"),
                        List.of(
                                "{\"id\":1,\"from\":\"a@y.com\"}",
                                "{\"id\":2,\"from\":\"spam@x.com\"}",
                                "{\"id\":3}", // missing the screened field
                                "{\"id\":4,\"to\":\"b@y.com\"}", // missing it too
                                "not json", // not JSON
                                "{\"id\":6,\"from\":\"c@y.com\"}"));
        updates = Files.write(tmp.resolve("updates.txt"), List.of("add z@y.com", "frobnicate"));
    }

    private Cli screen(String out, String... more) {
        Cli cli = new Cli();
        List<String> args =
                new java.util.ArrayList<>(
                        List.of(
                                "screen",
                                "--quiet",
                                "--filter",
                                filter.toString(),
                                "--input",
                                input.toString(),
                                "--updates",
                                updates.toString(),
                                "--format",
                                "json",
                                "--field",
                                "from",
                                "--output",
                                tmp.resolve(out).toString(),
                                "--flagged-output",
                                tmp.resolve(out + "-flagged").toString()));
        args.addAll(List.of(more));
        assertThat(cli.run(args.toArray(String[]::new))).as(cli.err.toString()).isZero();
        return cli;
    }

    @Test
    void theRejectedCountIsTheLinesInRejected() throws Exception {
        Cli cli = screen("text");
        List<String> rejected = Cli.readParts(tmp.resolve("text/_rejected"));
        // 1 not JSON, 2 missing the field, 1 bad command
        assertThat(rejected).hasSize(4);
        assertThat(cli.err.toString().lines().findFirst().orElseThrow())
                .startsWith(
                        "read 6 records; wrote 2 clean records to "
                                + tmp.resolve("text")
                                + "; rejected 4; 1 flagged to "
                                + tmp.resolve("text-flagged")
                                + "; 2 of the rejected missing a screened field; 1 of the rejected"
                                + " bad update commands (");

        Cli json = screen("json", "--json");
        assertThat(Cli.readParts(tmp.resolve("json/_rejected"))).hasSize(4);
        Map<String, Object> summary = Cli.json(json.out.toString());
        assertThat(summary)
                .containsEntry("records_in", 6L)
                .containsEntry("records_out", 2L)
                .containsEntry("records_rejected", 4L)
                .containsEntry("records_flagged", 1L)
                .containsEntry("records_missing_field", 2L)
                .containsEntry("commands_rejected", 1L);
    }
}
