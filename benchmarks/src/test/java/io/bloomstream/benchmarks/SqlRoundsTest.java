package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link SqlRounds} and the query {@link SqlBenchmark} runs for {@code BLOOM_DEDUP}. */
class SqlRoundsTest {

    @Test
    void alternatesTheOrderOfTheQueriesRoundByRound() {
        List<String> queries = List.of("row_number", "bloom_dedup", "row_number_ttl");
        assertThat(SqlRounds.order(queries, 1)).isEqualTo(queries);
        assertThat(SqlRounds.order(queries, 2))
                .containsExactly("row_number_ttl", "bloom_dedup", "row_number");
        assertThat(SqlRounds.order(queries, 3)).isEqualTo(queries);
        assertThatThrownBy(() -> SqlRounds.order(queries, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("round")
                .hasMessageContaining("0");
    }

    @Test
    void summarizesMedianSpreadAndRatiosOfMediansPerBackend() {
        List<SqlRounds.Run> runs =
                List.of(
                        new SqlRounds.Run("rocksdb", "row_number", 1, 100, 9),
                        new SqlRounds.Run("rocksdb", "bloom_dedup", 1, 300, 3),
                        new SqlRounds.Run("rocksdb", "row_number_ttl", 1, 90, 10),
                        new SqlRounds.Run("rocksdb", "row_number_ttl", 2, 80, 11),
                        new SqlRounds.Run("rocksdb", "bloom_dedup", 2, 150, 4),
                        new SqlRounds.Run("rocksdb", "row_number", 2, 50, 10),
                        new SqlRounds.Run("rocksdb", "row_number", 3, 200, 8),
                        new SqlRounds.Run("rocksdb", "bloom_dedup", 3, 240, 5),
                        new SqlRounds.Run("rocksdb", "row_number_ttl", 3, 120, 12),
                        new SqlRounds.Run("hashmap", "bloom_dedup", 1, 1, 1));

        List<SqlRounds.Row> rows = SqlRounds.summarize(runs, "rocksdb");

        assertThat(rows)
                .extracting(SqlRounds.Row::query)
                .containsExactly("row_number", "bloom_dedup", "row_number_ttl");
        SqlRounds.Row bloom = rows.get(1);
        assertThat(bloom.rounds()).isEqualTo(3);
        assertThat(bloom.median()).isEqualTo(240);
        assertThat(bloom.min()).isEqualTo(150);
        assertThat(bloom.max()).isEqualTo(300);
        // ratio of the medians (240 / 100), not the median of the per-round ratios (3.0)
        assertThat(bloom.vsExact().getAsDouble()).isCloseTo(2.4, within(1e-9));
        assertThat(bloom.vsExactTtl().getAsDouble()).isCloseTo(240.0 / 90, within(1e-9));
        // per-round ratios: 3.0, 3.0, 1.2
        assertThat(bloom.minRoundRatio()).isCloseTo(1.2, within(1e-9));
        assertThat(bloom.maxRoundRatio()).isCloseTo(3.0, within(1e-9));
        // CPU per row (the process's, first to last record): medians 4 and 9, so 2.25x less
        assertThat(bloom.medianCpuMicrosPerRow()).isEqualTo(4);
        assertThat(bloom.cpuVsExact().getAsDouble()).isCloseTo(9.0 / 4, within(1e-9));
        assertThat(rows.get(0).vsExact().getAsDouble()).isEqualTo(1.0);
        assertThat(rows.get(2).vsExactTtl()).isEmpty();
        assertThat(SqlRounds.table(rows))
                .contains("| rocksdb | bloom_dedup | 3 | 240 | 150 - 300 | 2.40x | 2.67x |")
                .contains("| 4.00 | 2.25x |")
                .contains("| per-round ratio, min - max | median CPU us/row | CPU vs exact |\n")
                .contains("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertThat(SqlRounds.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThatThrownBy(() -> SqlRounds.median(new double[0]))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void bloomDedupIsTheDocumentedQuerySizedByTheTotal() {
        // docs/sql-dedup.md: the whole-table dedup partitions by BLOOM_SHARD(id) (1024 shards),
        // expected_items counts the ids of the whole input and shards names BLOOM_SHARD's count
        assertThat(SqlQueries.sql("bloom_dedup", 500_000))
                .isEqualTo(
                        "SELECT id, x FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 500000, fpp => 0.01,"
                                + " shards => 1024, uid => 'bench-dedup')");
        assertThat(SqlQueries.SHARDED_VIEW).contains("BLOOM_SHARD(id) AS shard");
    }

    @Test
    void bloomDedupExactIsTheDocumentedQueryWithExactOn() {
        // docs/sql-dedup.md, "Exact mode": the documented query with exact => TRUE
        assertThat(SqlQueries.sql("bloom_dedup_exact", 500_000))
                .isEqualTo(
                        "SELECT id, x FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 500000, fpp => 0.01,"
                                + " shards => 1024, exact => TRUE, uid => 'bench-dedup-exact')");
        assertThat(SqlRounds.baseline("bloom_dedup_exact")).isEqualTo("row_number");
    }

    @Test
    void eventTimeQueriesCompareWithRowNumberOrderedByTheRowtime() {
        assertThat(SqlRounds.baseline("bloom_dedup_et")).isEqualTo("row_number_et");
        assertThat(SqlRounds.baseline("bloom_dedup_whole_et")).isEqualTo("row_number_et");
        assertThat(SqlRounds.baseline("bloom_dedup_arrival_et")).isEqualTo("row_number_et");
        assertThat(SqlRounds.baseline("row_number_et")).isEqualTo("row_number_et");
        assertThat(SqlRounds.baseline("row_number_mb_et")).isEqualTo("row_number_et");
        assertThat(SqlQueries.sql("row_number_mb_et", 500_000))
                .isEqualTo(SqlQueries.sql("row_number_et", 500_000));
        assertThat(SqlQueries.sql("row_number_et", 500_000)).contains("ORDER BY ts)");
        assertThat(SqlQueries.sql("bloom_dedup_arrival_et", 500_000))
                .isEqualTo(
                        "SELECT id, x FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 500000, fpp => 0.01,"
                                + " shards => 1024, on_time => DESCRIPTOR(ts), first_by =>"
                                + " 'ARRIVAL', uid => 'bench-dedup-arrival-et')");
        assertThat(SqlQueries.sql("bloom_dedup_whole_et", 500_000))
                .doesNotContain("PARTITION BY")
                .doesNotContain("first_by")
                .contains("on_time => DESCRIPTOR(ts)");
    }

    @Test
    void noEventTimeRowIsLateUnderTheWatermarkOfItsDisorder() {
        // row i's time is in [i, i + D); the watermark after rows 0..i-1 is at most their
        // latest time minus D, so below i
        long d = 1000;
        long latest = Long.MIN_VALUE;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (long i = 0; i < 200_000; i++) {
            long t = SqlBenchmark.eventTimeOf(i, d);
            assertThat(t).isBetween(i, i + d - 1);
            if (latest != Long.MIN_VALUE) {
                assertThat(latest - d).isLessThan(t);
            }
            latest = Math.max(latest, t);
            min = Math.min(min, t - i);
            max = Math.max(max, t - i);
        }
        assertThat(min).isZero(); // the jitter spans its range
        assertThat(max).isEqualTo(d - 1);
    }

    @Test
    void updatingQueriesCompareWithCountDistinctOnTheSameChangelog() {
        assertThat(SqlRounds.baseline("bloom_count_distinct_updating"))
                .isEqualTo("count_distinct_updating");
        assertThat(SqlRounds.baseline("bloom_count_distinct_updating_1p"))
                .isEqualTo("count_distinct_updating");
        assertThat(SqlRounds.baseline("count_distinct_updating_1p"))
                .isEqualTo("count_distinct_updating");
        assertThat(SqlRounds.baseline("bloom_count_distinct_1p")).isEqualTo("count_distinct");
    }

    @Test
    void bloomCountDistinctUpdatingIsTheCountingFormOverTheSameGroups() {
        // docs/sql-functions.md: the counting form takes the literal 'retract' as 4th argument
        assertThat(SqlQueries.sql("bloom_count_distinct_updating", 1_000_000))
                .isEqualTo(
                        "SELECT g, BLOOM_COUNT_DISTINCT(id, 62500, 0.01, 'retract') FROM events"
                                + " GROUP BY g");
        assertThat(SqlQueries.sql("bloom_count_distinct_updating_1p", 1_000_000))
                .isEqualTo(SqlQueries.sql("bloom_count_distinct_updating", 1_000_000));
        assertThat(SqlQueries.sql("count_distinct_updating", 1_000_000))
                .isEqualTo(SqlQueries.sql("count_distinct", 1_000_000));
        assertThat(SqlQueries.isUpdating("count_distinct_updating_1p")).isTrue();
        assertThat(SqlQueries.isUpdating("count_distinct_1p")).isFalse();
    }
}
