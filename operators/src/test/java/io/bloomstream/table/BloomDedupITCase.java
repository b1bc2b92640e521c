package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.table.SqlTesting.Backend;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link BloomDedup} in streaming SQL on a mini cluster at parallelism 2, against exact
 * SQL baselines on the committed test data.
 */
class BloomDedupITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlTesting.miniCluster();

    private static final double FPP = 0.01;

    private static void idsTable(StreamTableEnvironment t) {
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
        StreamTableEnvironment t = SqlTesting.tableEnv(SqlTesting.config(backend), 2);
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
}
