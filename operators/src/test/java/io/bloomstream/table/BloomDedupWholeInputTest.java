package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.ExplainDetail;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link DedupTableFunction} without {@code PARTITION BY}: the whole input deduplicated
 * by {@code id_column}, on one task, with the input's own columns as output (the shortest rewrite
 * of a keep-first query).
 */
class BloomDedupWholeInputTest {

    private static final String CALL =
            "SELECT * FROM BLOOM_DEDUP(input => TABLE v, id_column => 'id',"
                    + " expected_items => 1000, fpp => 0.0001)";

    /** 400 rows of 100 ids (seed 30), each row numbered, as a view {@code v(id, x)}. */
    private static List<Object[]> rows(StreamTableEnvironment t) {
        Random random = new Random(30);
        List<Object[]> rows = new ArrayList<>();
        StringBuilder values = new StringBuilder();
        for (int i = 0; i < 400; i++) {
            String id = "id-" + random.nextInt(100);
            rows.add(new Object[] {id, i});
            values.append(i == 0 ? "" : ", ").append("('").append(id).append("', ").append(i);
            values.append(")");
        }
        t.executeSql(
                "CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES " + values + ") AS r(id, x)");
        return rows;
    }

    @Test
    void withoutPartitionByKeepsTheFirstRowOfEachIdWithTheInputsColumns() throws Exception {
        StreamTableEnvironment t = SqlTesting.tableEnv(new Configuration(), 2);
        List<Object[]> rows = rows(t);

        assertThat(t.sqlQuery(CALL).getResolvedSchema().getColumnNames())
                .containsExactly("id", "x");
        // Flink runs a set-semantic PTF without PARTITION BY as one task (a singleton exchange).
        assertThat(t.explainSql(CALL, ExplainDetail.JSON_EXECUTION_PLAN))
                .containsPattern("(?s)\"type\" : \"ProcessTableFunction.*?\"parallelism\" : 1,");

        Set<String> seen = new HashSet<>();
        List<String> firsts =
                rows.stream()
                        .filter(r -> seen.add((String) r[0]))
                        .map(r -> r[0] + "," + r[1])
                        .collect(Collectors.toList());
        List<String> out =
                SqlTesting.collect(t, CALL).stream()
                        .map((Row r) -> r.getField(0) + "," + r.getField(1))
                        .collect(Collectors.toList());
        // One source task feeds the one dedup task in order, so the output is the first row of
        // each id, in order, up to false positives: 100 ids at fpp 1e-4 expect 0.01 of them, and
        // the filter's hash has a fixed seed, so these rows give the same result on every run.
        assertThat(out).containsExactlyElementsOf(firsts);
    }

    @Test
    void theShardedFormSizedByTheTotalKeepsTheSameRows() throws Exception {
        StreamTableEnvironment t = SqlTesting.tableEnv(new Configuration(), 2);
        List<Object[]> rows = rows(t);
        t.executeSql(
                "CREATE TEMPORARY VIEW sharded AS SELECT *, BLOOM_SHARD(id, 4) AS shard FROM v");
        Set<String> seen = new HashSet<>();
        List<String> firsts =
                rows.stream()
                        .filter(r -> seen.add((String) r[0]))
                        .map(r -> r[0] + "," + r[1])
                        .collect(Collectors.toList());
        // expected_items is the whole input's; each of the 4 shards is sized for its share.
        List<String> out =
                SqlTesting.collect(
                                t,
                                "SELECT id, x FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY"
                                        + " shard, id_column => 'id', expected_items => 1000,"
                                        + " fpp => 0.0001, shards => 4)")
                        .stream()
                        .map((Row r) -> r.getField(0) + "," + r.getField(1))
                        .collect(Collectors.toList());
        // Each id lives in one shard, fed in order by the one source task: the same first rows,
        // in another order across shards.
        assertThat(out).containsExactlyInAnyOrderElementsOf(firsts);
    }
}
