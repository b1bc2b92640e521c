package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Tests for {@link PlanCommand}. */
class PlanCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        return cl.execute(args);
    }

    @Test
    void printsSizingForOneMillionAtOnePercent() {
        assertThat(run("plan", "--expected-items", "1000000", "--fpp", "0.01")).isZero();
        assertThat(out.toString())
                .contains("hashes (k)        6")
                .contains("512-bit pages")
                // classic formula -n ln p / (ln 2)^2 = 9.585 bits per item
                .contains("classic formula 9.585")
                .contains("floor log2(1/p) 6.644")
                // the paged model's rate next to the classic layout's with the same m and k
                .contains("theoretical fpp   9.9980e-03 at 1000000 items (classic layout, same m")
                // dedup's first cascade stage at 0.9%: 2048-bit state pages of 256 bytes, each
                // with 24 bytes of entry overhead in a savepoint: 4,832 x 280 / 10^6
                .contains("dedup state       1.35 bytes per id (BloomDedup, default config: first")
                .contains("stage at 0.0090, 2048-bit state pages; savepoint)")
                // exact mode's entry of a 16-character id: on the heap 64 bytes of node, table
                // and String, and an array of 16 + 16 bytes; on RocksDB 1 + 4 + 16 + 17 bytes
                .contains(
                        "dedup --exact     the above and an entry per id: 96 bytes in heap memory,"
                                + " 38 on RocksDB before compression (a 16-character id; a UUID:"
                                + " 120, 58;")
                // 19.0 bytes per id (benchmarks/RESULTS.md) x 10^6, against 1,239,808 bytes
                .contains("exact dedup       19000000 bytes (18.12 MiB) of Flink state, 15.3x");
    }

    @Test
    void jsonHasExactModesEntryBytesBesideTheFilters() throws Exception {
        assertThat(run("plan", "--expected-items", "1000000", "--fpp", "0.01", "--json")).isZero();
        var m = io.bloomstream.jobs.Cli.json(out.toString());
        assertThat((Double) m.get("dedup_state_bytes_per_id")).isBetween(1.3, 1.4);
        assertThat(m)
                .containsEntry("exact_mode_entry_bytes_heap", 96L)
                .containsEntry("exact_mode_entry_bytes_rocksdb", 38L)
                .containsEntry("exact_mode_entry_bytes_heap_uuid", 120L)
                .containsEntry("exact_mode_entry_bytes_rocksdb_uuid", 58L);
    }

    @Test
    void classicLayoutOnRequest() {
        assertThat(run("plan", "--expected-items", "1000", "--fpp", "0.01", "--page-bits", "0"))
                .isZero();
        assertThat(out.toString()).contains("classic (one page)").contains("hashes (k)        7");
    }

    @Test
    void badFlagsExitNonZeroWithAClearMessage() {
        assertThat(run("plan", "--expected-items", "0", "--fpp", "0.01")).isEqualTo(2);
        assertThat(err.toString()).contains("--expected-items must be >= 1, was 0");
        assertThat(run("plan", "--expected-items", "10", "--fpp", "2")).isEqualTo(2);
        assertThat(err.toString())
                .contains("'2' is not a rate between 0 and 1 (exclusive): did you mean 0.02 (2%)?");
        assertThat(run("plan", "--fpp", "0.1")).isEqualTo(2);
        assertThat(err.toString()).contains("--expected-items");
    }

    @Test
    void missingCommandIsAnError() {
        assertThat(run()).isEqualTo(2);
        assertThat(err.toString()).contains("missing command");
    }
}
