package io.bloomstream.table;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/** Streaming table environments on a mini cluster, with every bloomstream function registered. */
final class SqlTesting {

    /** The committed test data (see testdata/README.md). */
    static final Path TESTDATA = Path.of("..", "testdata").toAbsolutePath().normalize();

    private SqlTesting() {}

    /** A streaming table environment at {@code parallelism} with the functions registered. */
    static StreamTableEnvironment tableEnv(Configuration conf, int parallelism) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        return tableEnv(env);
    }

    /** A streaming table environment on {@code env} with the functions registered. */
    static StreamTableEnvironment tableEnv(StreamExecutionEnvironment env) {
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        BloomFunctions.registerAll(t);
        return t;
    }

    /** The final rows of a query: its changelog applied (insert-only queries: all rows). */
    static List<Row> collect(StreamTableEnvironment t, String query) throws Exception {
        TableResult result = t.executeSql(query);
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = result.collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                switch (r.getKind()) {
                    case INSERT:
                    case UPDATE_AFTER:
                        r.setKind(org.apache.flink.types.RowKind.INSERT);
                        rows.add(r);
                        break;
                    default:
                        r.setKind(org.apache.flink.types.RowKind.INSERT);
                        rows.remove(r);
                }
            }
        }
        return rows;
    }
}
