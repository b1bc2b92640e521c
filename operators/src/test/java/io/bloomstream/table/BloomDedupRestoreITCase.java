package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link DedupTableFunction} across a stop-with-savepoint and a restore, on the heap and
 * RocksDB backends: the first half of the committed dedup data, then a savepoint, then the second
 * half from it. Under event-time retention of a day, with one second of event time per line (the
 * data span 8.3 hours), every repeat is within the retention, so the exact answer is still the
 * distinct ids (11,784); the restore carries the pages, the metadata and the cleanup timers.
 */
class BloomDedupRestoreITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final double FPP = 0.01;
    private static final String QUERY =
            "SELECT * FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                    + " id_column => 'id', expected_items => 300, fpp => 0.01,"
                    + " retention => INTERVAL '1' DAY, on_time => DESCRIPTOR(ts),"
                    + " uid => 'dedup_ids')";

    private static List<String> lines;
    private static int half;
    private static final AtomicLong ENTERED = new AtomicLong();
    private static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();
    private static volatile CountDownLatch firstHalfDone = new CountDownLatch(1);
    private static volatile long firstHalfExpected;

    @BeforeAll
    static void readData() throws Exception {
        lines = Files.readAllLines(SqlTesting.TESTDATA.resolve("dedup/ids.txt"));
        half = lines.size() / 2;
    }

    /** Line i (or a marker -1 past the first half in the first run) as (line, id, ts). */
    private static Row row(long i) {
        return Row.of(i, lines.get((int) i), Instant.ofEpochSecond(1_000_000 + i));
    }

    private static StreamExecutionEnvironment env(Backend backend, String restore) {
        Configuration conf = backend.jobConfig();
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore);
            conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        return env;
    }

    /** Registers the view {@code sharded} over the lines {@code source} emits, and the sink. */
    private static void pipeline(StreamTableEnvironment t, DataStream<Long> source) {
        DataStream<Row> rows =
                source.map(BloomDedupRestoreITCase::row)
                        .returns(
                                Types.ROW_NAMED(
                                        new String[] {"line", "id", "ts"},
                                        Types.LONG,
                                        Types.STRING,
                                        Types.INSTANT));
        t.createTemporaryView(
                "events",
                t.fromDataStream(
                        rows,
                        Schema.newBuilder()
                                .column("line", DataTypes.BIGINT())
                                .column("id", DataTypes.STRING())
                                .column("ts", DataTypes.TIMESTAMP_LTZ(3))
                                .watermark("ts", "ts - INTERVAL '1' MINUTE")
                                .build()));
        t.executeSql(
                "CREATE TEMPORARY VIEW sharded AS"
                        + " SELECT id, ts, BLOOM_SHARD(id, 8) AS shard FROM events");
        t.toDataStream(t.sqlQuery(QUERY)).sinkTo(new CollectSink());
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoreFromASavepointKeepsEveryIdSeen(Backend backend, @TempDir Path tmp)
            throws Exception {
        OUT.clear();
        ENTERED.set(0);
        firstHalfDone = new CountDownLatch(1);
        Set<String> firstIds = new HashSet<>(lines.subList(0, half));
        Set<String> allIds = new HashSet<>(lines);
        firstHalfExpected = (long) (firstIds.size() - bound(firstIds.size()));

        // Run 1: the first half, then markers (filtered out) until stopped with a savepoint.
        StreamExecutionEnvironment env1 = env(backend, null);
        StreamTableEnvironment t1 = SqlTesting.tableEnv(env1);
        DataGeneratorSource<Long> endless =
                new DataGeneratorSource<>(i -> i < half ? i : -1L, Long.MAX_VALUE, Types.LONG);
        pipeline(
                t1,
                env1.fromSource(endless, WatermarkStrategy.noWatermarks(), "first-half")
                        .uid("first-half")
                        .setParallelism(1)
                        .filter(BloomDedupRestoreITCase::countReal)
                        .setParallelism(1));
        JobClient job = env1.executeAsync("sql-dedup-first-half");
        assertThat(firstHalfDone.await(2, TimeUnit.MINUTES)).as("first half processed").isTrue();
        String savepoint =
                job.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        List<String> first = new ArrayList<>(OUT);

        // Run 2, from the savepoint: the second half.
        OUT.clear();
        StreamExecutionEnvironment env2 = env(backend, savepoint);
        StreamTableEnvironment t2 = SqlTesting.tableEnv(env2);
        DataGeneratorSource<Long> rest =
                new DataGeneratorSource<>(i -> half + i, lines.size() - half, Types.LONG);
        pipeline(
                t2,
                env2.fromSource(rest, WatermarkStrategy.noWatermarks(), "second-half")
                        .uid("second-half")
                        .setParallelism(1));
        env2.execute("sql-dedup-second-half");
        List<String> second = new ArrayList<>(OUT);

        Set<String> firstSet = new HashSet<>(first);
        assertThat(firstSet).as("no id twice in run 1").hasSameSizeAs(first);
        assertThat(firstIds).containsAll(firstSet);
        for (String id : second) {
            assertThat(firstSet)
                    .as("id of run 1 returned again after the restore")
                    .doesNotContain(id);
        }
        Set<String> returned = new HashSet<>(first);
        returned.addAll(second);
        assertThat(returned).as("no id twice").hasSize(first.size() + second.size());
        assertThat(allIds).hasSize(11_784).containsAll(returned);
        int dropped = allIds.size() - returned.size();
        System.out.printf(
                "BLOOM_DEDUP restore on %s: %d + %d of %d distinct ids returned, %d dropped"
                        + " (bound %.1f)%n",
                backend, first.size(), second.size(), allIds.size(), dropped, bound(allIds.size()));
        assertThat((double) dropped).isLessThanOrEqualTo(bound(allIds.size()));
    }

    /** n p + 4.5 sqrt(n p (1 - p)): the binomial bound on first occurrences dropped. */
    private static double bound(int n) {
        return n * FPP + 4.5 * Math.sqrt(n * FPP * (1 - FPP));
    }

    private static boolean countReal(Long line) {
        if (line < 0) {
            return false;
        }
        ENTERED.incrementAndGet();
        checkFirstHalfDone();
        return true;
    }

    private static void checkFirstHalfDone() {
        if (ENTERED.get() >= half && OUT.size() >= firstHalfExpected) {
            firstHalfDone.countDown();
        }
    }

    /** Collects the returned ids into {@link #OUT} (the mini cluster runs in this JVM). */
    private static final class CollectSink implements Sink<Row> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<Row> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Row row, Context ctx) {
                    OUT.add((String) row.getField("id"));
                    checkFirstHalfDone();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
