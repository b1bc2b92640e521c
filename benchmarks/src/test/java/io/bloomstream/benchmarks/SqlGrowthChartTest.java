package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;

/** Tests for {@link SqlGrowthChart}. */
class SqlGrowthChartTest {

    @TempDir Path dir;

    private static SqlMedians line(
            long ids, String backend, String query, double median, String status) {
        return new SqlMedians(
                2 * ids, ids, backend, query, 3, median, median, median, 1, 1, 1, status);
    }

    private static List<SqlMedians> sweep() {
        List<SqlMedians> lines = new ArrayList<>();
        for (long ids : new long[] {50_000, 500_000, 5_000_000}) {
            for (String backend : List.of("hashmap", "rocksdb")) {
                for (String query : List.of("row_number", "bloom_dedup")) {
                    boolean stopped =
                            ids == 5_000_000
                                    && backend.equals("rocksdb")
                                    && query.equals("row_number");
                    lines.add(
                            line(
                                    ids,
                                    backend,
                                    query,
                                    1e6 / Math.log10(ids),
                                    stopped ? JobRun.STOPPED_AT_BUDGET : JobRun.COMPLETE));
                }
            }
        }
        return lines;
    }

    @Test
    void drawsOneLinePerQueryAndBackendAndMarksTheRunsStoppedAtBudget() {
        XYChart chart = SqlGrowthChart.chart(sweep());

        // the crosses of a line's stopped runs come right after it
        assertThat(chart.getSeriesMap().keySet())
                .containsExactly(
                        "row_number (hashmap)",
                        "bloom_dedup (hashmap)",
                        "row_number (rocksdb)",
                        "row_number (rocksdb)" + LogLogChart.STOPPED_SUFFIX,
                        "bloom_dedup (rocksdb)");
        XYSeries line = chart.getSeriesMap().get("bloom_dedup (rocksdb)");
        assertThat(line.getXData()).containsExactly(50_000.0, 500_000.0, 5_000_000.0);
        XYSeries stopped =
                chart.getSeriesMap().get("row_number (rocksdb)" + LogLogChart.STOPPED_SUFFIX);
        assertThat(stopped.getXData()).containsExactly(5_000_000.0);
        assertThat(chart.getStyler().isXAxisLogarithmic()).isTrue();
        assertThat(chart.getStyler().isYAxisLogarithmic()).isTrue();
        assertThat(chart.getTitle()).isEqualTo("bloom_dedup vs row_number");
    }

    @Test
    void aLaterLineOfTheSamePointWins() {
        List<SqlMedians> lines = new ArrayList<>(sweep());
        lines.add(line(500_000, "hashmap", "bloom_dedup", 42, JobRun.COMPLETE));

        XYSeries s = SqlGrowthChart.chart(lines).getSeriesMap().get("bloom_dedup (hashmap)");

        assertThat(s.getXData()).hasSize(3);
        assertThat(s.getYData()[1]).isEqualTo(42);
    }

    @Test
    void writesThePngOfACsvFile() throws Exception {
        Path csv = dir.resolve("growth.csv");
        SqlMedians.append(csv, sweep());
        Path png = dir.resolve("out/growth.png");

        SqlGrowthChart.main(new String[] {"--out=" + png, csv.toString()});

        byte[] bytes = Files.readAllBytes(png);
        assertThat(bytes).startsWith(0x89, 'P', 'N', 'G');
        assertThatThrownBy(() -> SqlGrowthChart.chart(List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
