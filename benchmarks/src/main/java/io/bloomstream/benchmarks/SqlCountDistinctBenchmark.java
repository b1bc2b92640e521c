package io.bloomstream.benchmarks;

import io.bloomstream.table.BloomFunctions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * SQL benchmark: {@code BLOOM_COUNT_DISTINCT(id, n / groups, 0.01)} against Flink's exact {@code
 * COUNT(DISTINCT id)} in a streaming {@code GROUP BY} of {@code groups} groups, on the given state
 * backends, in one run. Prints records/s, the ratio Bloom / exact of the same run, the state bytes
 * (a canonical savepoint taken once every record was processed) per distinct id, and the final
 * results summed over the groups against the true distinct count.
 *
 * <p>Input: {@code distinct * duplication} BIGINT ids, the distinct ids in a scrambled order then
 * {@code duplication - 1} more passes, grouped by {@code id mod groups}. Both queries run with
 * mini-batch (1 s, 5,000 rows), parallelism 1. Throughput is measured where records enter the
 * pipeline (backpressure makes that the pace of the slowest operator), first to last real record.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.SqlCountDistinctBenchmark [distinct] [duplication] [backends]
 * [groups]}, e.g. {@code 10000000 2 hashmap,rocksdb 16}.
 */
public final class SqlCountDistinctBenchmark {

    private static final AtomicLong INPUT = new AtomicLong();
    private static final AtomicLong FIRST_NANOS = new AtomicLong();
    private static final AtomicLong LAST_NANOS = new AtomicLong();
    private static final Map<Long, Long> LAST = new ConcurrentHashMap<>();

    private SqlCountDistinctBenchmark() {}

    /** One measured run. */
    record Result(
            String pipeline,
            String backend,
            long records,
            double seconds,
            long stateBytes,
            long total) {
        double recordsPerSecond() {
            return records / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        long distinct = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        int duplication = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        String[] backends = (args.length > 2 ? args[2] : "hashmap,rocksdb").split(",");
        int groups = args.length > 3 ? Integer.parseInt(args[3]) : 16;
        long records = distinct * duplication;
        List<Result> results = new ArrayList<>();
        for (String backend : backends) {
            results.add(run("bloom", backend, distinct, records, groups));
            results.add(run("exact", backend, distinct, records, groups));
        }
        System.out.printf(
                Locale.ROOT,
                "%n## SqlCountDistinctBenchmark: %,d distinct ids x %d = %,d records, %d groups,"
                        + " fpp 1%%, parallelism 1%n%n",
                distinct,
                duplication,
                records,
                groups);
        System.out.println(
                "| backend | query | records/s | vs exact | state bytes | vs exact | bytes/distinct"
                        + " id | result (sum over groups) |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Result r : results) {
            Result exact =
                    results.stream()
                            .filter(x -> x.backend.equals(r.backend) && x.pipeline.equals("exact"))
                            .findFirst()
                            .orElseThrow();
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %,.0f | %.2fx | %,d | %.3fx | %.3f | %,d (%+.3f%%) |%n",
                    r.backend,
                    r.pipeline.equals("bloom") ? "BLOOM_COUNT_DISTINCT" : "COUNT(DISTINCT)",
                    r.recordsPerSecond(),
                    r.recordsPerSecond() / exact.recordsPerSecond(),
                    r.stateBytes,
                    (double) r.stateBytes / exact.stateBytes,
                    (double) r.stateBytes / distinct,
                    r.total,
                    100.0 * (r.total - distinct) / distinct);
        }
    }

    private static Result run(
            String pipeline, String backend, long distinct, long records, int groups)
            throws Exception {
        INPUT.set(0);
        FIRST_NANOS.set(0);
        LAST_NANOS.set(0);
        LAST.clear();
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        Path checkpoints = Files.createTempDirectory("bloomstream-checkpoints");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set("table.exec.mini-batch.enabled", "true");
        tEnv.getConfig().set("table.exec.mini-batch.allow-latency", "1 s");
        tEnv.getConfig().set("table.exec.mini-batch.size", "5000");
        BloomFunctions.registerAll(tEnv);
        // After `records` real ids the source emits -1 markers until the job is stopped.
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        i -> i < records ? JobBenchmark.idOf(i, distinct) : -1L,
                        Long.MAX_VALUE,
                        Types.LONG);
        DataStream<Long> ids =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "ids")
                        .filter(new StampRealIds())
                        .name("real-ids");
        tEnv.createTemporaryView("ids", tEnv.fromDataStream(ids).as("id"));
        long perGroup = (distinct + groups - 1) / groups;
        String count =
                pipeline.equals("bloom")
                        ? "BLOOM_COUNT_DISTINCT(id, " + perGroup + ", 0.01)"
                        : "COUNT(DISTINCT id)";
        String query =
                "SELECT MOD(id, "
                        + groups
                        + ") AS g, "
                        + count
                        + " FROM ids GROUP BY MOD(id, "
                        + groups
                        + ")";
        tEnv.toChangelogStream(tEnv.sqlQuery(query)).sinkTo(new LastValueSink()).name("last");
        JobClient job = env.executeAsync(pipeline + "-" + backend);
        waitForInput(records);
        double seconds = (LAST_NANOS.get() - FIRST_NANOS.get()) / 1e9;
        Path dir = Files.createTempDirectory("bloomstream-savepoint");
        // the savepoint flushes the last mini-batch: the sink has every group's final value
        job.stopWithSavepoint(false, dir.toUri().toString(), SavepointFormatType.CANONICAL).get();
        long bytes = directorySize(dir);
        deleteRecursively(dir);
        deleteRecursively(checkpoints);
        long total = LAST.values().stream().mapToLong(Long::longValue).sum();
        Result r = new Result(pipeline, backend, records, seconds, bytes, total);
        System.out.printf(
                Locale.ROOT,
                "%s/%s: %.2f s, %,.0f records/s, savepoint %,d bytes, result %,d%n",
                backend,
                pipeline,
                seconds,
                r.recordsPerSecond(),
                bytes,
                total);
        return r;
    }

    private static void waitForInput(long records) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(60).toNanos();
        while (INPUT.get() < records) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + INPUT.get() + " records entered");
            }
            Thread.sleep(20);
        }
    }

    /** Drops the -1 markers and stamps the first and the latest real record. */
    static final class StampRealIds implements FilterFunction<Long> {
        @Override
        public boolean filter(Long id) {
            if (id == -1L) {
                return false;
            }
            long now = System.nanoTime();
            FIRST_NANOS.compareAndSet(0, now);
            LAST_NANOS.set(now);
            INPUT.incrementAndGet();
            return true;
        }
    }

    /** Keeps each group's latest value. */
    static final class LastValueSink implements Sink<Row> {
        @Override
        public SinkWriter<Row> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Row row, Context context) {
                    long g = ((Number) row.getField(0)).longValue();
                    if (row.getKind() == RowKind.INSERT || row.getKind() == RowKind.UPDATE_AFTER) {
                        Object v = row.getField(1);
                        LAST.put(g, v == null ? -1 : ((Number) v).longValue());
                    }
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    private static long directorySize(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
