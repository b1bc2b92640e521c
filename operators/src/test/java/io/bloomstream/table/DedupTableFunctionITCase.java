package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link DedupTableFunction} in streaming SQL on a mini cluster at parallelism 2, against
 * exact SQL baselines on the committed test data.
 */
class DedupTableFunctionITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final double FPP = 0.01;

    private static void idsTable(TableEnvironment t) {
        t.executeSql(
                "CREATE TEMPORARY TABLE ids (id STRING) WITH ('connector' = 'filesystem', 'path' = '"
                        + SqlTesting.TESTDATA.resolve("dedup/ids.txt").toUri()
                        + "', 'format' = 'raw')");
        t.executeSql(
                "CREATE TEMPORARY VIEW sharded AS SELECT id, BLOOM_SHARD(id, 8) AS shard FROM ids");
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void returnsTheDistinctIdsMinusFalsePositives(Backend backend) throws Exception {
        StreamTableEnvironment t = SqlTesting.tableEnv(backend.jobConfig(), 2);
        idsTable(t);
        Set<String> exact = new HashSet<>();
        for (Row r : SqlTesting.collect(t, "SELECT DISTINCT id FROM ids")) {
            exact.add((String) r.getField(0));
        }
        assertThat(exact).hasSize(11_784); // testdata/dedup/ids.truth.json

        List<Row> out =
                SqlTesting.collect(
                        t,
                        "SELECT * FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 300, fpp => "
                                + FPP
                                + ")");
        Set<String> ids = new HashSet<>();
        for (Row r : out) {
            assertThat(r.getArity()).isEqualTo(2);
            ids.add((String) r.getField("id"));
        }
        assertThat(ids).as("no id twice").hasSize(out.size());
        assertThat(exact).containsAll(ids);
        // Each of the distinct ids' first occurrences is dropped with probability at most FPP,
        // independently: at most n p + 4.5 sqrt(n p (1 - p)) (a false alarm below 1e-5).
        int n = exact.size();
        double bound = n * FPP + 4.5 * Math.sqrt(n * FPP * (1 - FPP));
        System.out.printf(
                "BLOOM_DEDUP on %s: %d of %d distinct ids returned, %d dropped (bound %.1f)%n",
                backend, ids.size(), n, n - ids.size(), bound);
        assertThat((double) (n - ids.size())).isLessThanOrEqualTo(bound);
    }

    /**
     * The class names of 0.4 and before still register under {@code CREATE FUNCTION} and give the
     * same results as the new ones (deprecated subclasses, kept for one release).
     */
    @Test
    @SuppressWarnings("deprecation")
    void oldClassNamesStillRegister() throws Exception {
        StreamTableEnvironment t = SqlTesting.tableEnv(Backend.HEAP.jobConfig(), 1);
        idsTable(t);
        String[][] old = {
            {"OLD_DEDUP", BloomDedup.class.getName()},
            {"OLD_SHARD", BloomShard.class.getName()},
            {"OLD_COUNT_DISTINCT", BloomCountDistinct.class.getName()},
            {"OLD_BUILD", BloomBuild.class.getName()},
            {"OLD_UNION", BloomUnion.class.getName()},
            {"OLD_ESTIMATE", BloomEstimate.class.getName()},
            {"OLD_MIGHT_CONTAIN", BloomMightContain.class.getName()}
        };
        for (String[] f : old) {
            t.executeSql("CREATE TEMPORARY FUNCTION " + f[0] + " AS '" + f[1] + "'");
        }
        String dedup =
                "SELECT COUNT(*) FROM %s(input => TABLE sharded PARTITION BY shard,"
                        + " id_column => 'id', expected_items => 300, fpp => 0.01)";
        assertThat(SqlTesting.collect(t, String.format(dedup, "OLD_DEDUP")))
                .isEqualTo(SqlTesting.collect(t, String.format(dedup, "BLOOM_DEDUP")));
        // the aggregates and scalars in batch mode, where BLOOM_UNION needs no retraction
        TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        BloomFunctions.registerAll(batch);
        idsTable(batch);
        for (String[] f : old) {
            batch.executeSql("CREATE TEMPORARY FUNCTION " + f[0] + " AS '" + f[1] + "'");
        }
        String[] queries = {
            "SELECT %COUNT_DISTINCT%(id, 20000, 0.01), MIN(%SHARD%(id, 8)) FROM ids",
            "SELECT %ESTIMATE%(f), %MIGHT_CONTAIN%(f, 'x') FROM"
                    + " (SELECT %BUILD%(id, 20000, 0.01) AS f FROM ids)",
            "SELECT %ESTIMATE%(%UNION%(f)) FROM (SELECT %BUILD%(id, 20000, 0.01) AS f FROM ids)"
        };
        for (String q : queries) {
            String oldQuery = q.replaceAll("%(\\w+)%", "OLD_$1");
            String newQuery = q.replaceAll("%(\\w+)%", "BLOOM_$1");
            List<Row> expected = new ArrayList<>();
            batch.executeSql(newQuery).collect().forEachRemaining(expected::add);
            List<Row> actual = new ArrayList<>();
            batch.executeSql(oldQuery).collect().forEachRemaining(actual::add);
            assertThat(actual).as(oldQuery).hasSize(1).isEqualTo(expected);
        }
    }
}
