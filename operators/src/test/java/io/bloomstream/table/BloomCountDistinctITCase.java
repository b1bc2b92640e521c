package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.table.SqlHarness.Click;
import io.bloomstream.table.internal.SqlArguments;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link CountDistinctAggFunction} in streaming SQL against the exact {@code COUNT(DISTINCT)}. */
class BloomCountDistinctITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    private static final long ITEMS = 10_000;
    private static final FilterSpec SPEC = SqlArguments.spec("test", ITEMS, 0.01);

    /**
     * Checks a result against the exact count and against the library: a filter of the same shape
     * holding the same values has the same bits, so the SQL result equals its estimate exactly
     * (whatever the merges), and that is within 3 standard errors of the exact count.
     */
    static void check(String what, long bloom, long exact, Set<String> users) {
        assertThat(exact).as(what).isEqualTo(users.size());
        BloomFilter library = BloomFilter.create(SPEC);
        users.forEach(library::add);
        Estimate e = library.estimate();
        assertThat(bloom).as(what).isEqualTo(Math.round(e.estimate()));
        assertThat((double) Math.abs(bloom - exact))
                .as(what)
                .isLessThanOrEqualTo(3 * e.standardError() + 0.5);
    }

    @Test
    void twoPhaseGroupByMergesLocalFilters() throws Exception {
        TableEnvironment env = SqlHarness.streaming("rocksdb", 2);
        env.getConfig().set("table.exec.mini-batch.enabled", "true");
        env.getConfig().set("table.exec.mini-batch.allow-latency", "200 ms");
        env.getConfig().set("table.exec.mini-batch.size", "500");
        env.getConfig().set("table.optimizer.agg-phase-strategy", "TWO_PHASE");
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        String query =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, "
                        + ITEMS
                        + ", 0.01) FROM clicks GROUP BY page";
        assertThat(env.explainSql(query))
                .contains("LocalGroupAggregate")
                .contains("GlobalGroupAggregate");
        Map<List<Object>, Row> rows = SqlHarness.finalRows(env.executeSql(query), 1);
        Map<String, Set<String>> users = SqlHarness.usersPerPage(SqlHarness.clicks());
        assertThat(rows).hasSize(users.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            check(page, (Long) r.getField(1), users.get(page).size(), users.get(page));
        }
    }

    /** Window TVFs: each window's result against the exact COUNT(DISTINCT) of the window. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "TUMBLE(TABLE clicks, DESCRIPTOR(t), INTERVAL '5' MINUTES)",
                "HOP(TABLE clicks, DESCRIPTOR(t), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)",
                "CUMULATE(TABLE clicks, DESCRIPTOR(t), INTERVAL '5' MINUTES, INTERVAL '15'"
                        + " MINUTES)"
            })
    void windowAggregationMatchesExactCountPerWindow(String window) throws Exception {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        String query =
                "SELECT window_start, window_end, page, BLOOM_COUNT_DISTINCT(`user`, "
                        + ITEMS
                        + ", 0.01), COUNT(DISTINCT `user`) FROM "
                        + window
                        + " GROUP BY window_start, window_end, page";
        // AUTO aggregates windows in two phases: local filters merged into the global one
        assertThat(env.explainSql(query)).contains("LocalWindowAggregate");
        Map<List<Object>, Row> rows = SqlHarness.finalRows(env.executeSql(query), 3);
        Map<List<Object>, Set<String>> truth = windows(window, SqlHarness.clicks());
        assertThat(rows).hasSize(truth.size());
        for (Map.Entry<List<Object>, Row> e : rows.entrySet()) {
            Row r = e.getValue();
            List<Object> key =
                    List.of(millis(r.getField(0)), millis(r.getField(1)), (String) r.getField(2));
            assertThat(truth).containsKey(key);
            check(key.toString(), (Long) r.getField(3), (Long) r.getField(4), truth.get(key));
        }
    }

    private static long millis(Object timestamp) {
        return ((LocalDateTime) timestamp).toInstant(ZoneOffset.UTC).toEpochMilli();
    }

    /** The users of each (window start, window end, page), assigned as the window TVFs do. */
    private static Map<List<Object>, Set<String>> windows(String window, List<Click> clicks) {
        long step = 5 * 60_000L;
        long size = window.startsWith("TUMBLE") ? step : window.startsWith("HOP") ? 2 * step : 0;
        Map<List<Object>, Set<String>> out = new HashMap<>();
        for (Click c : clicks) {
            long last = c.ts() - Math.floorMod(c.ts(), step);
            List<long[]> spans = new ArrayList<>();
            if (size > 0) {
                for (long start = last; start > c.ts() - size; start -= step) {
                    spans.add(new long[] {start, start + size});
                }
            } else { // CUMULATE, max 15 minutes: [max-aligned start, every step end past ts)
                long max = 3 * step;
                long start = c.ts() - Math.floorMod(c.ts(), max);
                for (long end = last + step; end <= start + max; end += step) {
                    spans.add(new long[] {start, end});
                }
            }
            for (long[] w : spans) {
                out.computeIfAbsent(List.of(w[0], w[1], c.page()), k -> new HashSet<>())
                        .add(c.user());
            }
        }
        return out;
    }

    @Test
    void batchModeGroupByMatchesExactCount() throws Exception {
        TableEnvironment env =
                TableEnvironment.create(
                        EnvironmentSettings.newInstance()
                                .inBatchMode()
                                .withConfiguration(
                                        new Configuration()
                                                .set(PipelineOptions.GENERIC_TYPES, false))
                                .build());
        BloomFunctions.registerAll(env);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "", false);
        Map<List<Object>, Row> rows =
                SqlHarness.finalRows(
                        env.executeSql(
                                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, "
                                        + ITEMS
                                        + ", 0.01), COUNT(DISTINCT `user`) FROM clicks GROUP BY"
                                        + " page"),
                        1);
        Map<String, Set<String>> users = SqlHarness.usersPerPage(SqlHarness.clicks());
        assertThat(rows).hasSize(users.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            check(page, (Long) r.getField(1), (Long) r.getField(2), users.get(page));
        }
    }

    @Test
    void groupByPageMatchesExactCount() throws Exception {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        Map<List<Object>, Row> rows =
                SqlHarness.finalRows(
                        env.executeSql(
                                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01),"
                                        + " COUNT(DISTINCT `user`) FROM clicks GROUP BY page"),
                        1);
        Map<String, Long> truth = SqlHarness.truth();
        Map<String, Set<String>> users = SqlHarness.usersPerPage(SqlHarness.clicks());
        FilterSpec spec = SqlArguments.spec("test", 10000, 0.01);
        assertThat(rows).hasSize(truth.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            long bloom = (Long) r.getField(1);
            long exact = (Long) r.getField(2);
            assertThat(exact).isEqualTo(truth.get(page));
            BloomFilter library = BloomFilter.create(spec);
            users.get(page).forEach(library::add);
            Estimate e = library.estimate();
            assertThat(bloom).as(page).isEqualTo(Math.round(e.estimate()));
            assertThat((double) Math.abs(bloom - exact))
                    .as(page)
                    .isLessThanOrEqualTo(3 * e.standardError() + 0.5);
        }
    }
}
