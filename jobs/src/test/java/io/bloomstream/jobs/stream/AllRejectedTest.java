package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.io.RejectReasons;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for a run that rejects every record (a mistyped {@code --id-field}, say): it says so, names
 * the flag, and exits non-zero; a stream stops after its first records all miss the same field.
 */
class AllRejectedTest {

    @TempDir Path tmp;

    @Test
    void aMistypedIdFieldFailsTheRunAndNamesTheFlag() throws Exception {
        Path input =
                Files.writeString(
                        tmp.resolve("in.jsonl"),
                        IntStream.range(0, 5)
                                .mapToObj(i -> "{\"id\":\"e" + i + "\"}")
                                .collect(Collectors.joining("\n", "", "\n")));
        Cli cli = new Cli();
        int status =
                cli.run(
                        "dedup",
                        "--quiet",
                        "--format",
                        "json",
                        "--id-field",
                        "idd",
                        "--input",
                        input.toString(),
                        "--output",
                        tmp.resolve("out").toString());
        assertThat(status).as(cli.err.toString()).isEqualTo(1);
        assertThat(cli.err.toString())
                .contains("read 5 records; wrote 0 first occurrences")
                .contains(
                        "error: every record read (5) was rejected: 5 missing field 'idd'; check"
                                + " --id-field idd");
    }

    @Test
    void aStreamStopsWhenItsFirstRecordsAllMissTheSameField() {
        RejectReasons.First first = new RejectReasons.First();
        for (int i = 1; i < RejectReasons.First.RECORDS; i++) {
            assertThat(first.rejected("missing field 'idd'")).isNull();
        }
        assertThat(first.rejected("missing field 'idd'"))
                .isEqualTo(
                        "the first 1000 records read were all rejected: missing field 'idd' (a"
                                + " mistyped field flag?); stopping rather than rejecting every"
                                + " record");
        // past the first records, or with one accepted among them, it never stops
        assertThat(first.rejected("missing field 'idd'")).isNull();
        RejectReasons.First mixed = new RejectReasons.First();
        mixed.accepted();
        for (int i = 0; i < 2 * RejectReasons.First.RECORDS; i++) {
            assertThat(mixed.rejected("missing field 'idd'")).isNull();
        }
        // nor for other reasons (a topic of broken records is what _rejected is for)
        RejectReasons.First broken = new RejectReasons.First();
        for (int i = 0; i < 2 * RejectReasons.First.RECORDS; i++) {
            assertThat(broken.rejected("not JSON: Unexpected character")).isNull();
        }
    }
}
