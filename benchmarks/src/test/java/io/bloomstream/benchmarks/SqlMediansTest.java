package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link SqlMedians}, the CSV lines of {@link SqlBenchmark}. */
class SqlMediansTest {

    @TempDir Path dir;

    private static SqlBenchmark.Result run(
            String backend, String query, int round, double seconds, long state, boolean done) {
        // 1,000 rows in `seconds`, 2 us of CPU per row
        return new SqlBenchmark.Result(
                query,
                backend,
                round,
                1000,
                seconds,
                state,
                500,
                "0.5",
                2_000_000,
                100L << 20,
                done);
    }

    @Test
    void appendsUnderOneHeaderAndReadsBackWhatItWrote() throws IOException {
        Path csv = dir.resolve("sub/growth.csv");
        SqlMedians a =
                new SqlMedians(
                        100_000,
                        50_000,
                        "hashmap",
                        "row_number",
                        3,
                        123456.5,
                        100000.25,
                        150000,
                        8.125,
                        4_567_890,
                        1L << 30,
                        JobRun.COMPLETE);
        SqlMedians b =
                new SqlMedians(
                        1_000_000,
                        500_000,
                        "rocksdb",
                        "bloom_dedup",
                        1,
                        98765.4,
                        98765.4,
                        98765.4,
                        3.5,
                        123,
                        -1,
                        JobRun.STOPPED_AT_BUDGET);

        SqlMedians.append(csv, List.of(a));
        SqlMedians.append(csv, List.of(b));

        List<String> lines = Files.readAllLines(csv);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0))
                .isEqualTo(
                        "rows,ids,backend,query,rounds,median_records_per_second,"
                                + "min_records_per_second,max_records_per_second,"
                                + "median_cpu_us_per_row,median_state_bytes,peak_rss_bytes,"
                                + "status");
        assertThat(lines.get(1))
                .isEqualTo(
                        "100000,50000,hashmap,row_number,3,123456.5,100000.3,150000.0,8.125,"
                                + "4567890,1073741824,complete");
        List<SqlMedians> read = SqlMedians.read(csv);
        assertThat(read).hasSize(2);
        assertThat(read.get(1)).isEqualTo(b);
        assertThat(read.get(1).stoppedAtBudget()).isTrue();
        assertThat(read.get(0).stoppedAtBudget()).isFalse();
        assertThat(read.get(0).median()).isEqualTo(123456.5);
        assertThat(read.get(0).min()).isEqualTo(100000.3); // one decimal in the file
    }

    @Test
    void refusesToAppendToOrReadAFileOfAnotherHeader() throws IOException {
        Path csv = dir.resolve("job.csv");
        Files.writeString(csv, JobRun.CSV_HEADER + "\n");

        assertThatThrownBy(() -> SqlMedians.checkAppendable(csv))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a SQL benchmark CSV");
        assertThatThrownBy(() -> SqlMedians.append(csv, List.of())).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> SqlMedians.read(csv)).isInstanceOf(IOException.class);
        assertThat(Files.readString(csv)).isEqualTo(JobRun.CSV_HEADER + "\n");
        SqlMedians.checkAppendable(dir.resolve("absent.csv")); // a new file is fine
    }

    @Test
    void aStatusWithCommasStaysOneField() {
        SqlMedians m = new SqlMedians(1, 1, "hashmap", "q", 1, 1, 1, 1, 1, 1, 1, "failed: a, b\nc");
        assertThat(SqlMedians.parse(m.csvLine()).status()).isEqualTo("failed: a; b;c");
        assertThatThrownBy(() -> SqlMedians.parse("1,2,3"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("12 fields")
                .hasMessageContaining("has 3");
    }

    @Test
    void summarizesEachBackendAndQueryOfTheRounds() {
        List<SqlBenchmark.Result> results =
                List.of(
                        run("hashmap", "row_number", 1, 0.01, 300, true), // 100,000/s
                        run("hashmap", "bloom_dedup", 1, 0.002, 50, true), // 500,000/s
                        run("hashmap", "bloom_dedup", 2, 0.004, 70, true), // 250,000/s
                        run("hashmap", "row_number", 2, 0.02, 100, true), // 50,000/s
                        run("hashmap", "row_number", 3, 0.005, 200, true), // 200,000/s
                        run("hashmap", "bloom_dedup", 3, 0.001, 60, true), // 1,000,000/s
                        run("rocksdb", "row_number", 1, 0.1, 900, false)); // 10,000/s

        List<SqlMedians> lines = SqlMedians.of(2000, 1000, List.of("hashmap", "rocksdb"), results);

        assertThat(lines)
                .extracting(m -> m.query() + " (" + m.backend() + ")")
                .containsExactly(
                        "row_number (hashmap)", "bloom_dedup (hashmap)", "row_number (rocksdb)");
        SqlMedians bloom = lines.get(1);
        assertThat(bloom.rows()).isEqualTo(2000);
        assertThat(bloom.ids()).isEqualTo(1000);
        assertThat(bloom.rounds()).isEqualTo(3);
        assertThat(bloom.median()).isCloseTo(500_000, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(bloom.min()).isCloseTo(250_000, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(bloom.max()).isCloseTo(1_000_000, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(bloom.cpuMicrosPerRow()).isEqualTo(2);
        assertThat(bloom.stateBytes()).isEqualTo(60);
        assertThat(bloom.peakRssBytes()).isEqualTo(100L << 20);
        assertThat(bloom.status()).isEqualTo(JobRun.COMPLETE);
        assertThat(lines.get(0).stateBytes()).isEqualTo(200);
        assertThat(lines.get(2).status()).isEqualTo(JobRun.STOPPED_AT_BUDGET);
        assertThat(lines.get(2).median())
                .isCloseTo(10_000, org.assertj.core.data.Offset.offset(1e-6));
    }
}
