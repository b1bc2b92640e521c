package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.table.RetractChangelogs.Aggregation;
import io.bloomstream.table.RetractChangelogs.Envs;
import io.bloomstream.table.RetractChangelogs.Generator;
import io.bloomstream.table.RetractChangelogs.Shape;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.ExploreSeeds;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Model test of {@link CountDistinctAggFunction}'s counting form, {@code BLOOM_COUNT_DISTINCT(user,
 * 500, 0.01, 'retract')}, on random legal changelogs ({@link RetractChangelogs.Generator}: inserts,
 * {@code -U}/{@code +U} pairs that change the user, the page, both or neither, deletes, re-inserts
 * of deleted ids; users from small pools, so a user holds several rows of a page and counters widen
 * past 4 bits; two pages per case emptied, one halfway and one at the end). Each case's changelog
 * goes through {@code fromChangelogStream} at parallelism 1 into {@code GROUP BY page} at
 * parallelism 2, with mini-batch off, on in one phase, and on in two phases with bundles of 7 rows
 * (so a local accumulator takes retractions of rows that an earlier bundle added), on the heap and
 * on RocksDB.
 *
 * <p>Oracle, per page with rows left: {@code COUNT(DISTINCT)} equals the model's exact count, and
 * the Bloom value equals exactly the rounded estimate of a plain {@code BloomFilter} of the same
 * shape holding the page's present users (see {@link RetractChangelogs#check}), which is within 3
 * standard errors of the exact count. That last part is statistical and the groups are many (and
 * small ones, of a few users, have estimates in steps of about 1 / k of a user, where the normal
 * approximation of the tails is rough): a job's groups beyond 3 standard errors, a sum of Bernoulli
 * trials of mean about 0.27% each, must be at most mean + 4.5 sqrt(mean) + 3. A page whose rows are
 * all gone has no row in the final table (or a row of zeros).
 *
 * <p>{@value #CASES} cases per job by default (seconds a job); {@code -Dbloomstream.modelTries=N}
 * runs N / 125 cases per job, {@code -Dbloomstream.modelSeed=S} replaces the seed, and the {@code
 * explore} profile runs it with a fresh seed, printed.
 */
class BloomCountDistinctRetractModelTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    static final long ITEMS = 500;
    static final double FPP = 0.01;
    static final FilterSpec SPEC = SqlArguments.spec("test", ITEMS, FPP);
    static final int CASES = 4;
    static final long SEED = 20261127L;
    static final int BUNDLE = 7;

    /** P(|Z| > 3) for a normal Z: a group's chance to miss its 3-error bound. */
    static final double MISS_RATE = 0.0027;

    static Stream<Arguments> jobs() {
        List<Arguments> out = new ArrayList<>();
        for (Aggregation a : Aggregation.values()) {
            for (Backend b : Backend.values()) {
                out.add(Arguments.of(a, b));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("jobs")
    void countingFormFollowsTheModel(Aggregation aggregation, Backend backend) throws Exception {
        long seed = seed() + 10L * aggregation.ordinal() + backend.ordinal();
        List<Row> rows = new ArrayList<>();
        Map<String, Set<String>> truth = new HashMap<>();
        int cases = cases();
        for (int c = 0; c < cases; c++) {
            Generator g = generate(seed, c);
            rows.addAll(g.rows());
            truth.putAll(g.usersPerPage());
        }
        Envs envs = RetractChangelogs.envs(backend, aggregation, BUNDLE);
        RetractChangelogs.createView(envs, "changes", rows, ChangelogMode.all());
        String query =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, "
                        + ITEMS
                        + ", "
                        + FPP
                        + ", 'retract'), COUNT(DISTINCT `user`) FROM changes GROUP BY page";
        String plan = envs.table().explainSql(query);
        if (aggregation == Aggregation.MINI_BATCH_TWO_PHASE) {
            assertThat(plan).contains("LocalGroupAggregate").contains("GlobalGroupAggregate");
        } else {
            assertThat(plan).doesNotContain("LocalGroupAggregate");
        }
        Map<List<Object>, Row> result = SqlHarness.finalRows(envs.table().executeSql(query), 1);
        String what = "seed " + seed + " (" + rows.size() + " changes) page ";
        int misses = 0;
        for (Map.Entry<String, Set<String>> e : truth.entrySet()) {
            Row r = result.get(List.of(e.getKey()));
            assertThat(r).as(what + e.getKey()).isNotNull();
            long bloom = (Long) r.getField(1);
            double se =
                    RetractChangelogs.checkExact(
                            what + e.getKey(), SPEC, bloom, (Long) r.getField(2), e.getValue());
            if (Math.abs(bloom - e.getValue().size()) > 3 * se + 0.5) {
                misses++;
            }
        }
        double mean = MISS_RATE * truth.size();
        assertThat((double) misses)
                .as(what + "*: groups beyond 3 standard errors, of " + truth.size())
                .isLessThanOrEqualTo(mean + 4.5 * Math.sqrt(mean) + 3);
        for (Row r : result.values()) {
            if (!truth.containsKey((String) r.getField(0))) {
                assertThat(List.of(r.getField(1), r.getField(2)))
                        .as(what + r.getField(0) + ": emptied")
                        .containsExactly(0L, 0L);
            }
        }
    }

    /**
     * Case {@code c}: 2 to 5 pages of random weights and user pools from 3 to 400 users, 200 to
     * 2,000 steps; page 1 emptied halfway and page 0 at the end.
     */
    private static Generator generate(long seed, int c) {
        Random r = new Random(seed * 1_000 + c);
        int n = 2 + r.nextInt(4);
        List<String> pages = new ArrayList<>();
        double[] weights = new double[n];
        int[] pools = new int[n];
        int[] poolSizes = {3, 12, 60, 400};
        for (int p = 0; p < n; p++) {
            pages.add("c" + c + "-p" + p);
            weights[p] = 0.5 + 1.5 * r.nextDouble();
            pools[p] = poolSizes[r.nextInt(poolSizes.length)];
        }
        int steps = 200 + r.nextInt(1_801);
        double inserts = 0.35 + 0.2 * r.nextDouble();
        double updates = (1 - inserts) * (0.3 + 0.4 * r.nextDouble());
        Shape shape =
                new Shape(pages, weights, pools, steps, inserts, updates, 1 - inserts - updates);
        Generator g = new Generator(r.nextLong(), shape, (c + 1) * 1_000_000L);
        g.run(steps / 2);
        g.empty(pages.get(1));
        g.run(steps - steps / 2);
        g.empty(pages.get(0));
        return g;
    }

    private static int cases() {
        String tries = System.getProperty("bloomstream.modelTries", "").trim();
        return tries.isEmpty() ? CASES : Math.max(1, Integer.parseInt(tries) / 125);
    }

    private static long seed() {
        String given = System.getProperty(ExploreSeeds.SEED_PROPERTY, "").trim();
        if (!given.isEmpty()) {
            return Long.parseLong(given);
        }
        if (Boolean.getBoolean(ExploreSeeds.EXPLORE_PROPERTY)) {
            long seed = new SecureRandom().nextLong() / 1_000_000;
            System.out.printf(
                    "explore: BloomCountDistinctRetractModelTest seed=%d (replay: -D%s=%d)%n",
                    seed, ExploreSeeds.SEED_PROPERTY, seed);
            return seed;
        }
        return SEED;
    }
}
