package io.bloomstream.benchmarks;

import static io.bloomstream.benchmarks.SqlBenchmark.FLINK_OPTION_PREFIX;
import static io.bloomstream.benchmarks.SqlBenchmark.disorderMs;
import static io.bloomstream.benchmarks.SqlQueries.EVENT_TIME;
import static io.bloomstream.benchmarks.SqlQueries.GROUP_OF_X;
import static io.bloomstream.benchmarks.SqlQueries.MINI_BATCH;
import static io.bloomstream.benchmarks.SqlQueries.SHARDED_VIEW;
import static io.bloomstream.benchmarks.SqlQueries.SHARDED_VIEW_EVENT_TIME;
import static io.bloomstream.benchmarks.SqlQueries.TABLE_API_DEDUP;
import static io.bloomstream.benchmarks.SqlQueries.TTL;
import static io.bloomstream.benchmarks.SqlQueries.isEventTime;
import static io.bloomstream.benchmarks.SqlQueries.isUpdating;
import static io.bloomstream.benchmarks.SqlQueries.sql;
import static io.bloomstream.benchmarks.SqlQueries.tableApiDedup;

import io.bloomstream.benchmarks.SqlBenchmark.Result;
import io.bloomstream.table.BloomFunctions;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
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
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.checkpoint.CheckpointFailureReason;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * One measured run of a {@link SqlBenchmark} query: the job on a local mini cluster (its Flink and
 * table options, its input view and the query), its counters (records in, rows out, each group's
 * latest count, the clock and CPU time of the first and last record), and its end: a stop with a
 * canonical savepoint, whose size is the run's state bytes. The counters are static because the
 * source's filter and the sink run in this JVM, one run at a time.
 */
final class SqlRun {

    private static final AtomicLong INPUT = new AtomicLong();
    private static final AtomicLong OUTPUT = new AtomicLong();
    private static final AtomicLong FIRST_NANOS = new AtomicLong();
    private static final AtomicLong LAST_NANOS = new AtomicLong();
    private static final AtomicLong TARGET = new AtomicLong();
    private static final AtomicLong FIRST_CPU_NANOS = new AtomicLong();
    private static final AtomicLong LAST_CPU_NANOS = new AtomicLong();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    private static final Map<Long, Long> LAST = new ConcurrentHashMap<>();

    private SqlRun() {}

    /**
     * Runs {@code query} on {@code backend} over {@code rows} rows of {@code ids} distinct ids (an
     * updating query: its changelog's rows instead), waits for them or the {@code budget}, stops
     * the job with a canonical savepoint, prints the run's line and returns it.
     */
    static Result run(String query, String backend, long rows, long ids, int round, Duration budget)
            throws Exception {
        boolean updating = isUpdating(query);
        if (updating) {
            rows = UpdatingInput.changelogRows(ids);
        }
        INPUT.set(0);
        OUTPUT.set(0);
        FIRST_NANOS.set(0);
        LAST_NANOS.set(0);
        TARGET.set(rows);
        FIRST_CPU_NANOS.set(0);
        LAST_CPU_NANOS.set(0);
        LAST.clear();
        Memory.resetPeakRss();
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        Path checkpoints = Files.createTempDirectory("bloomstream-checkpoints");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(10));
        // -Dbench.flink.KEY=VALUE: a Flink option for every query (RocksDB tuning, say)
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith(FLINK_OPTION_PREFIX)) {
                conf.setString(
                        key.substring(FLINK_OPTION_PREFIX.length()), System.getProperty(key));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig()
                .set(
                        "table.exec.mini-batch.enabled",
                        String.valueOf(
                                !isEventTime(query) || query.endsWith(MINI_BATCH + EVENT_TIME)));
        tEnv.getConfig().set("table.exec.mini-batch.allow-latency", "1 s");
        tEnv.getConfig().set("table.exec.mini-batch.size", "5000");
        if (query.endsWith("_ttl")) {
            tEnv.getConfig().set("table.exec.state.ttl", TTL);
        }
        if (query.endsWith("_1p")) {
            // no local pre-aggregation before the shuffle (Flink's default under mini-batch is
            // AUTO, which is two-phase when every aggregate can merge)
            tEnv.getConfig().set("table.optimizer.agg-phase-strategy", "ONE_PHASE");
        }
        BloomFunctions.registerAll(tEnv);
        if (updating) {
            // no upstream state: the changelog's rows go straight to the aggregate
            tEnv.createTemporaryView(
                    "changelog",
                    tEnv.fromChangelogStream(
                            UpdatingInput.changelog(env, ids, new StampRealIds()),
                            Schema.newBuilder().column("x", DataTypes.BIGINT()).build(),
                            ChangelogMode.all()));
            tEnv.executeSql(
                    "CREATE TEMPORARY VIEW events AS SELECT CAST(x AS STRING) AS id, x, "
                            + GROUP_OF_X
                            + " AS g FROM changelog");
        } else if (isEventTime(query)) {
            EventTimeInput.events(env, tEnv, rows, ids, disorderMs(), new StampRealIds());
        } else {
            insertOnlyEvents(env, tEnv, rows, ids);
        }
        tEnv.executeSql(isEventTime(query) ? SHARDED_VIEW_EVENT_TIME : SHARDED_VIEW);
        Table result =
                query.equals(TABLE_API_DEDUP)
                        ? tableApiDedup(tEnv, ids)
                        : tEnv.sqlQuery(sql(query, ids));
        tEnv.toChangelogStream(result).sinkTo(new CountingSink()).name("out");
        return measure(
                query,
                backend,
                rows,
                round,
                budget,
                checkpoints,
                env.executeAsync(query + "-" + backend));
    }

    /**
     * The view {@code events} of the insert-only queries: {@code rows} generated ids of {@code ids}
     * distinct ones.
     */
    private static void insertOnlyEvents(
            StreamExecutionEnvironment env, StreamTableEnvironment tEnv, long rows, long ids) {
        // After `rows` real ids the source emits -1 markers until the job is stopped.
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        i -> i < rows ? JobBenchmark.idOf(i, ids) : -1L,
                        Long.MAX_VALUE,
                        Types.LONG);
        DataStream<Long> xs =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "ids")
                        .uid("ids")
                        .filter(new StampRealIds())
                        .uid("real-ids")
                        .name("real-ids");
        tEnv.createTemporaryView("xs", tEnv.fromDataStream(xs).as("x"));
        tEnv.executeSql(
                "CREATE TEMPORARY VIEW events AS SELECT CAST(x AS STRING) AS id, x, "
                        + GROUP_OF_X
                        + " AS g, PROCTIME() AS pt FROM xs");
    }

    /**
     * Waits for the {@code rows} records of {@code job} (or its {@code budget}), stops it with a
     * canonical savepoint and reports the run.
     */
    private static Result measure(
            String query,
            String backend,
            long rows,
            int round,
            Duration budget,
            Path checkpoints,
            JobClient job)
            throws Exception {
        boolean complete = waitForInput(rows, budget);
        // at a stop, the rows so far: more keep coming until the savepoint
        long done = complete ? rows : INPUT.get();
        long cpuNanos =
                (complete ? LAST_CPU_NANOS.get() : OS.getProcessCpuTime()) - FIRST_CPU_NANOS.get();
        double seconds = (LAST_NANOS.get() - FIRST_NANOS.get()) / 1e9;
        Path dir = Files.createTempDirectory("bloomstream-savepoint");
        // the savepoint flushes the last mini-batch: the sink has every group's final value
        stopWithSavepoint(job, dir);
        long bytes = directorySize(dir);
        deleteRecursively(dir);
        deleteRecursively(checkpoints);
        long out =
                query.contains("count")
                        ? LAST.values().stream().mapToLong(Long::longValue).sum()
                        : OUTPUT.get();
        Result r =
                new Result(
                        query,
                        backend,
                        round,
                        done,
                        seconds,
                        bytes,
                        out,
                        loadAverage(),
                        cpuNanos,
                        Memory.peakRss(),
                        complete);
        System.out.printf(
                Locale.ROOT,
                "%s/%s, round %d: %.2f s, %,.0f records/s, %.2f us CPU/row, savepoint %,d bytes,"
                        + " %s %,d, peak RSS %,d MiB, load %s%s%n",
                backend,
                query,
                round,
                seconds,
                r.recordsPerSecond(),
                r.cpuMicrosPerRow(),
                bytes,
                query.contains("count") ? "count (sum over groups)" : "rows out",
                out,
                r.peakRssBytes() >> 20,
                r.load(),
                complete
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                ", STOPPED AT BUDGET %s after %,d of %,d rows",
                                budget,
                                done,
                                rows));
        return r;
    }

    /**
     * Stops {@code job} with a canonical savepoint into {@code dir}. Flink refuses the savepoint
     * while a task is still being deployed, as one downstream of the shuffle can be when a small
     * run has taken all its rows already: then it tries again, every 100 ms for up to a minute.
     */
    private static void stopWithSavepoint(JobClient job, Path dir) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                job.stopWithSavepoint(false, dir.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get();
                return;
            } catch (ExecutionException e) {
                if (attempt >= 600 || !notAllTasksRunning(e)) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private static boolean notAllTasksRunning(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CheckpointException c
                    && c.getCheckpointFailureReason()
                            == CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING) {
                return true;
            }
        }
        return false;
    }

    /** The 1-minute load average of the machine (other processes share its cores). */
    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /**
     * Waits until {@code records} records entered or {@code budget} is spent.
     *
     * @return whether every record entered (false: the budget ran out)
     */
    private static boolean waitForInput(long records, Duration budget) throws InterruptedException {
        long deadline = System.nanoTime() + budget.toNanos();
        while (INPUT.get() < records) {
            if (System.nanoTime() - deadline > 0) {
                if (INPUT.get() == 0) {
                    throw new IllegalStateException("no record entered in " + budget);
                }
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /**
     * Drops the -1 markers and stamps the first and the latest real record, and the process's CPU
     * time at the first and at the last one.
     */
    static final class StampRealIds implements FilterFunction<Long> {
        @Override
        public boolean filter(Long id) {
            if (id == -1L) {
                return false;
            }
            long now = System.nanoTime();
            if (FIRST_NANOS.compareAndSet(0, now)) {
                FIRST_CPU_NANOS.set(OS.getProcessCpuTime());
            }
            LAST_NANOS.set(now);
            // the CPU time of the last record before the count shows it: the main thread reads it
            // as soon as the count reaches the target (one task stamps: parallelism 1)
            if (INPUT.get() + 1 == TARGET.get()) {
                LAST_CPU_NANOS.set(OS.getProcessCpuTime());
            }
            INPUT.incrementAndGet();
            return true;
        }
    }

    /**
     * Counts inserted rows and keeps each group's latest value (count queries; a group deleted from
     * an updating result is dropped).
     */
    static final class CountingSink implements Sink<Row> {
        @Override
        public SinkWriter<Row> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Row row, Context context) {
                    if (row.getKind() == RowKind.DELETE && row.getField(0) instanceof Number g) {
                        LAST.remove(g.longValue()); // a group of an updating input emptied
                        return;
                    }
                    if (row.getKind() != RowKind.INSERT && row.getKind() != RowKind.UPDATE_AFTER) {
                        return;
                    }
                    OUTPUT.incrementAndGet();
                    Object key = row.getField(0);
                    if (key instanceof Number g) {
                        Object v = row.getField(1);
                        LAST.put(g.longValue(), v == null ? -1 : ((Number) v).longValue());
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
        long[] bytes = {0};
        walk(dir, f -> bytes[0] += f.toFile().length(), d -> {});
        return bytes[0];
    }

    private static void deleteRecursively(Path dir) throws IOException {
        walk(dir, f -> f.toFile().delete(), d -> d.toFile().delete());
    }

    /**
     * Visits the files under {@code dir}, then each directory after its content; a file that
     * vanishes while walking (Flink still cleaning up a stopped job's checkpoints) is skipped.
     */
    private static void walk(Path dir, Consumer<Path> onFile, Consumer<Path> afterDirectory)
            throws IOException {
        Files.walkFileTree(
                dir,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                        onFile.accept(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) {
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path d, IOException e) {
                        afterDirectory.accept(d);
                        return FileVisitResult.CONTINUE;
                    }
                });
    }
}
