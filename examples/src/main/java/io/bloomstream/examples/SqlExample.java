package io.bloomstream.examples;

import io.bloomstream.table.BloomFunctions;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * A SQL job on bloomstream's functions: {@code BLOOM_DEDUP} over the whole table (partitioned by
 * {@code BLOOM_SHARD}) and {@code BLOOM_COUNT_DISTINCT} per user. Prints sorted lines.
 */
public final class SqlExample {

    private SqlExample() {}

    /** Runs the queries on a local mini-cluster. */
    public static void main(String[] args) throws Exception {
        TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        t.getConfig().set("parallelism.default", "1");
        BloomFunctions.registerAll(t);
        t.executeSql(
                "CREATE TEMPORARY VIEW clicks AS SELECT * FROM (VALUES"
                        + " ('alice', 'a1'), ('alice', 'a2'), ('alice', 'a1'),"
                        + " ('bob', 'b1'), ('bob', 'b1'), ('carol', 'c1')) AS v(`user`, id)");
        t.executeSql(
                "CREATE TEMPORARY VIEW sharded AS SELECT *, BLOOM_SHARD(id) AS shard FROM clicks");

        print(
                t,
                "dedup ",
                "SELECT `user`, id FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                        + " id_column => 'id', expected_items => 10000, fpp => 0.001)");
        print(
                t,
                "count ",
                "SELECT `user`, BLOOM_COUNT_DISTINCT(id) FROM clicks GROUP BY `user`");
    }

    /** Prints the final rows of {@code query} (an updating result's last value per key). */
    private static void print(TableEnvironment t, String prefix, String query) throws Exception {
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Row> it = t.executeSql(query).collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                String line = prefix + r.getField(0) + " " + r.getField(1);
                switch (r.getKind()) {
                    case INSERT, UPDATE_AFTER -> lines.add(line);
                    case UPDATE_BEFORE, DELETE -> lines.remove(line);
                }
            }
        }
        lines.sort(null);
        lines.forEach(System.out::println);
    }
}
