package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.table.RetractChangelogs.Aggregation;
import io.bloomstream.table.RetractChangelogs.Envs;
import io.bloomstream.table.RetractChangelogs.Generator;
import io.bloomstream.table.RetractChangelogs.Shape;
import io.bloomstream.table.SqlHarness.Click;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.testing.Backend;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link CountDistinctAggFunction}'s counting form, {@code BLOOM_COUNT_DISTINCT(value,
 * expected_items, fpp, 'retract')}, on updating input in streaming SQL, against the exact {@code
 * COUNT(DISTINCT)} of the same query.
 *
 * <p><b>The bound.</b> Each group's result must be within 3 standard errors (+ 0.5, the rounding to
 * BIGINT) of the exact count, the standard error being that of the estimate n = m ln(m / m0) / k
 * from the m0 zero cells of m ({@code Estimate.standardError}: the linear-counting variance m (e^t
 * - t - 1) / k^2 at t = k n / m, corrected for the paged layout; about 0.1% of n at n =
 * expected_items and fpp 0.01). By the normal approximation a group misses it with probability
 * about 0.27%: over the {@value #STAT_SEEDS} x {@value #STAT_GROUPS} groups of the statistical test
 * and the 30-odd others about 0.2 misses are expected in all, and the seeds are fixed, so a failure
 * means a bug, not bad luck. The bound is the estimator's own: with no counter stuck at its maximum
 * the counters above zero are exactly the bits of a plain filter of the same shape holding the
 * values present, so each result must also equal that filter's rounded estimate ({@link
 * RetractChangelogs#check}), which catches a retraction lost or applied twice however small its
 * effect on the estimate.
 */
class BloomCountDistinctRetractITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    static final int STAT_SEEDS = 4;
    static final int STAT_GROUPS = 10;

    /**
     * The query, verbatim apart from the 4th argument: each user's latest page (the result
     * of a GROUP BY, an updating table), then the users per page.
     */
    @ParameterizedTest(name = "{0}, two-phase mini-batch {1}")
    @CsvSource({"hashmap, false", "rocksdb, true"})
    void latestPagePerUserMatchesExactCount(String backend, boolean twoPhase) throws Exception {
        TableEnvironment env = SqlHarness.streaming(backend, 2);
        if (twoPhase) {
            env.getConfig().set("table.exec.mini-batch.enabled", "true");
            env.getConfig().set("table.exec.mini-batch.allow-latency", "100 ms");
            env.getConfig().set("table.exec.mini-batch.size", "50");
            env.getConfig().set("table.optimizer.agg-phase-strategy", "TWO_PHASE");
        }
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        env.executeSql(
                "CREATE TEMPORARY VIEW latest AS SELECT `user`, LAST_VALUE(page) AS page FROM"
                        + " clicks GROUP BY `user`");
        String query =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, 'retract'), COUNT(DISTINCT"
                        + " `user`) FROM latest GROUP BY page";
        if (twoPhase) {
            assertThat(env.explainSql(query)).contains("LocalGroupAggregate");
        }
        Map<List<Object>, Row> rows = SqlHarness.finalRows(env.executeSql(query), 1);
        Map<String, Set<String>> latest = latestUsersPerPage(SqlHarness.clicks());
        FilterSpec spec = SqlArguments.spec("test", 10_000, 0.01);
        assertThat(rows).hasSize(latest.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            RetractChangelogs.check(
                    backend + " " + page,
                    spec,
                    (Long) r.getField(1),
                    (Long) r.getField(2),
                    latest.get(page));
        }
    }

    /** Each user in the page of their last click (the file is read in order). */
    private static Map<String, Set<String>> latestUsersPerPage(List<Click> clicks) {
        Map<String, String> last = new LinkedHashMap<>();
        for (Click c : clicks) {
            last.put(c.user(), c.page());
        }
        Map<String, Set<String>> out = new HashMap<>();
        last.forEach((user, page) -> out.computeIfAbsent(page, k -> new HashSet<>()).add(user));
        return out;
    }

    /**
     * An upsert source (primary key {@code id}, no {@code -U}): the planner adds
     * ChangelogNormalize, which turns it into a changelog with retractions for the aggregate.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"NO_MINI_BATCH, HEAP", "MINI_BATCH_TWO_PHASE, ROCKSDB"})
    void upsertSourceMatchesExactCount(Aggregation aggregation, Backend backend) throws Exception {
        List<String> pages = List.of("a", "b", "c", "d", "e", "f");
        Shape shape =
                new Shape(
                        pages,
                        new double[] {1, 2, 4, 8, 16, 0.5},
                        new int[] {50, 200, 800, 3_000, 8_000, 5},
                        20_000,
                        0.6,
                        0.25,
                        0.15);
        Generator g = new Generator(33, shape, 0).run();
        g.empty("f");
        Envs envs = RetractChangelogs.envs(backend, aggregation, 100);
        RetractChangelogs.createView(envs, "changes", g.rows(), ChangelogMode.upsert());
        Map<String, Set<String>> truth = g.usersPerPage();
        assertThat(truth).doesNotContainKey("f");
        String query =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 5000, 0.01, 'retract'),"
                        + " COUNT(DISTINCT `user`) FROM changes GROUP BY page";
        assertThat(envs.table().explainSql(query)).contains("ChangelogNormalize");
        checkAll(
                "upsert " + aggregation + " on " + backend + ": ",
                SqlArguments.spec("test", 5_000, 0.01),
                SqlHarness.finalRows(envs.table().executeSql(query), 1),
                truth);
    }

    /**
     * The statistical test: {@value #STAT_GROUPS} groups a seed of 10^2 to 2 x 10^4 distinct values
     * (log-uniform), in a generated CDC stream in which 30% of the changes are updates (the value,
     * the group or both) or deletes, interleaved across groups; every group within the bound of the
     * class comment. Seeds 1 to 3 run on the heap with two-phase mini-batch (bundles of 1,000
     * rows), seed 4 on RocksDB without mini-batch (a row there takes about twice as long).
     */
    @ParameterizedTest(name = "{0} on {1}, seeds {2} to {3}")
    @CsvSource({"MINI_BATCH_TWO_PHASE, HEAP, 1, 3", "NO_MINI_BATCH, ROCKSDB, 4, 4"})
    void cdcStreamWithDeletesAndUpdatesStaysWithinThreeStandardErrors(
            Aggregation aggregation, Backend backend, int firstSeed, int lastSeed)
            throws Exception {
        List<Row> rows = new ArrayList<>();
        Map<String, Set<String>> truth = new HashMap<>();
        for (int seed = firstSeed; seed <= lastSeed; seed++) {
            Random r = new Random(seed);
            List<String> pages = new ArrayList<>();
            double[] weights = new double[STAT_GROUPS];
            int[] pools = new int[STAT_GROUPS];
            double total = 0;
            for (int p = 0; p < STAT_GROUPS; p++) {
                pages.add("s" + seed + "-g" + p);
                double size = 100 * Math.pow(200, r.nextDouble()); // 10^2 .. 2 x 10^4
                weights[p] = size;
                pools[p] = (int) (2 * size); // 1.3 size rows of 2 size users: ~0.96 size distinct
                total += size;
            }
            // inserts 70%, updates 15%, deletes 15%: the rows grow by 0.55 a step
            Shape shape =
                    new Shape(pages, weights, pools, (int) (1.3 * total / 0.55), 0.7, 0.15, 0.15);
            Generator g = new Generator(seed, shape, seed * 10_000_000L).run();
            rows.addAll(g.rows());
            truth.putAll(g.usersPerPage());
        }
        Envs envs = RetractChangelogs.envs(backend, aggregation, 1_000);
        RetractChangelogs.createView(envs, "changes", rows, ChangelogMode.all());
        String query =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 20000, 0.01, 'retract'),"
                        + " COUNT(DISTINCT `user`) FROM changes GROUP BY page";
        checkAll(
                "CDC " + aggregation + " on " + backend + " (" + rows.size() + " changes): ",
                SqlArguments.spec("test", 20_000, 0.01),
                SqlHarness.finalRows(envs.table().executeSql(query), 1),
                truth);
    }

    private static void checkAll(
            String what,
            FilterSpec spec,
            Map<List<Object>, Row> rows,
            Map<String, Set<String>> truth) {
        assertThat(rows).as(what + "groups").hasSize(truth.size());
        for (Map.Entry<String, Set<String>> e : truth.entrySet()) {
            Row r = rows.get(List.of(e.getKey()));
            assertThat(r).as(what + e.getKey()).isNotNull();
            RetractChangelogs.check(
                    what + e.getKey(),
                    spec,
                    (Long) r.getField(1),
                    (Long) r.getField(2),
                    e.getValue());
        }
    }

    /**
     * In window TVF aggregations (insert-only, slices merged, two phases by default) the counting
     * form gives the plain form's numbers too.
     */
    @ParameterizedTest
    @CsvSource({
        "'HOP(TABLE clicks, DESCRIPTOR(t), INTERVAL ''5'' MINUTES, INTERVAL ''10'' MINUTES)'",
        "'CUMULATE(TABLE clicks, DESCRIPTOR(t), INTERVAL ''5'' MINUTES, INTERVAL ''15'' MINUTES)'"
    })
    void countingFormEqualsPlainFormInWindows(String window) throws Exception {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        String query =
                "SELECT window_start, window_end, page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01),"
                        + " BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, 'retract') FROM "
                        + window
                        + " GROUP BY window_start, window_end, page";
        assertThat(env.explainSql(query)).contains("LocalWindowAggregate");
        Map<List<Object>, Row> rows = SqlHarness.finalRows(env.executeSql(query), 3);
        assertThat(rows).hasSizeGreaterThan(20);
        for (Map.Entry<List<Object>, Row> e : rows.entrySet()) {
            assertThat(e.getValue().getField(4))
                    .as(e.getKey().toString())
                    .isEqualTo(e.getValue().getField(3));
        }
    }

    /**
     * On insert-only input the counting form gives the same numbers as the plain form: the same
     * filter shape, its counters above zero where the plain filter has bits set.
     */
    @Test
    void countingFormEqualsPlainFormOnInsertOnlyInput() throws Exception {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        Map<List<Object>, Row> rows =
                SqlHarness.finalRows(
                        env.executeSql(
                                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01),"
                                        + " BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, 'retract'),"
                                        + " COUNT(DISTINCT `user`) FROM clicks GROUP BY page"),
                        1);
        Map<String, Set<String>> users = SqlHarness.usersPerPage(SqlHarness.clicks());
        FilterSpec spec = SqlArguments.spec("test", 10_000, 0.01);
        assertThat(rows).hasSize(users.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            assertThat(r.getField(2)).as(page).isEqualTo(r.getField(1));
            RetractChangelogs.check(
                    page, spec, (Long) r.getField(2), (Long) r.getField(3), users.get(page));
        }
    }
}
