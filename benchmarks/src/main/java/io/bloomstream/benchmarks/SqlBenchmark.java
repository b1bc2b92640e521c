package io.bloomstream.benchmarks;

import static io.bloomstream.benchmarks.SqlQueries.EVENT_TIME;
import static io.bloomstream.benchmarks.SqlQueries.GROUP_OF_X;
import static io.bloomstream.benchmarks.SqlQueries.MINI_BATCH;
import static io.bloomstream.benchmarks.SqlQueries.SHARDED_VIEW;
import static io.bloomstream.benchmarks.SqlQueries.SHARDED_VIEW_EVENT_TIME;
import static io.bloomstream.benchmarks.SqlQueries.TABLE_API_DEDUP;
import static io.bloomstream.benchmarks.SqlQueries.TTL;
import static io.bloomstream.benchmarks.SqlQueries.UPDATING;
import static io.bloomstream.benchmarks.SqlQueries.UPDATING_FPP_PROPERTY;
import static io.bloomstream.benchmarks.SqlQueries.isEventTime;
import static io.bloomstream.benchmarks.SqlQueries.isUpdating;
import static io.bloomstream.benchmarks.SqlQueries.sql;
import static io.bloomstream.benchmarks.SqlQueries.tableApiDedup;

import io.bloomstream.table.BloomFunctions;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * SQL benchmark: the queries a user writes, through the same SQL path in one run, on the given
 * state backends: {@code BLOOM_DEDUP} against Flink's keep-first {@code ROW_NUMBER} deduplication
 * (also with {@code table.exec.state.ttl} set, as users bound its state), and {@code
 * BLOOM_COUNT_DISTINCT} against {@code COUNT(DISTINCT)} in a {@code GROUP BY} of {@value
 * SqlQueries#GROUPS} groups. Runs every query once per round, for {@code rounds} rounds (default
 * {@value #DEFAULT_ROUNDS}), the order alternating from one round to the next ({@link
 * SqlRounds#order}); prints each run (records/s, the ratio to the exact query of the same backend
 * and round, the state bytes of a canonical savepoint taken once every record was processed, the
 * machine's load average), then per query the median records/s of the rounds, their min-max spread,
 * and the ratio of the medians to {@code row_number} (or {@code count_distinct}) and to {@code
 * row_number_ttl} when it ran ({@link SqlRounds#summarize}).
 *
 * <p>Input: {@code rows} generated ids ({@link DataGeneratorSource}, not rate-limited) as STRING
 * ({@code id}, the decimal of a scrambled 64-bit number {@code x}; {@code ids} distinct, in passes
 * over the same order), plus {@code x} and a processing-time attribute. Every query runs in
 * streaming mode at parallelism 1 with mini-batch on (1 s, 5,000 rows, as Flink's tuning guide
 * recommends) and checkpoints every 10 s to a filesystem directory. Throughput is measured where
 * records enter the pipeline (backpressure makes that the pace of the slowest operator), first to
 * last record: start-up and planning are not in it. Each query first runs once at a tenth of the
 * size, unreported (JIT warm-up). The {@code BLOOM_DEDUP} query is the documented one, in one place
 * ({@link SqlQueries#SHARDED_VIEW}, {@link SqlQueries#bloomDedup}).
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.SqlBenchmark
 * [rows] [ids] [backends] [queries] [rounds]}, e.g. {@code 1000000 500000 hashmap,rocksdb
 * row_number,bloom_dedup,row_number_ttl 3}. A query named with {@code _ttl} runs with {@code
 * table.exec.state.ttl} set ({@code row_number_ttl}); one with {@code _1p} ({@code
 * count_distinct_1p}, {@code bloom_count_distinct_1p}) with {@code
 * table.optimizer.agg-phase-strategy: ONE_PHASE}; {@code bloom_dedup_whole} is {@code BLOOM_DEDUP}
 * without {@code PARTITION BY} (the whole input on one task); {@code bloom_dedup_exact} is the
 * documented query with {@code exact => TRUE}; {@value SqlQueries#TABLE_API_DEDUP} is no query but
 * the Java Table pipeline of {@link SqlQueries#tableApiDedup} (the DataStream operator through
 * {@code BloomDedupTables}). {@code -Dbench.flink.KEY=VALUE} sets a Flink option for every query
 * (for example {@code -Dbench.flink.execution.checkpointing.incremental=true}). {@code
 * -Dbench.csv=FILE} appends each query's medians to a CSV file after the last round ({@link
 * SqlMedians}, read by {@link SqlGrowthChart}); {@code -Dbench.budget=90m} is the time budget of
 * one run, past which it is stopped and reported at the rows it took, marked "stopped at budget".
 *
 * <p>On updating input: {@code count_distinct_updating} ({@code COUNT(DISTINCT id)}) and {@code
 * bloom_count_distinct_updating} (the counting form, {@code BLOOM_COUNT_DISTINCT(id, perGroup,
 * 0.01, 'retract')}), with {@code _1p} variants, read in place of {@code events} a generated
 * retract changelog of {@code 3 * ids} rows that leaves {@code ids} distinct values ({@link
 * UpdatingInput}; {@code rows} does not apply), over the same groups; their records/s count
 * changelog rows, and they are compared with {@code count_distinct_updating}. {@code
 * -Dbench.updatingFpp=P} sets the fpp of {@code bloom_count_distinct_updating} (0.01 unless set).
 *
 * <p>By event time (issue 40): the queries named {@code *}{@value SqlQueries#EVENT_TIME} read
 * {@code events} with a rowtime {@code ts} in place of {@code pt}: row i's time is i ms plus a
 * jitter uniform in [0, D) ms (fixed per row, D {@code -Dbench.disorderMs}, {@value
 * #DEFAULT_DISORDER_MS} unless set), under the watermark {@code ts - D ms}, so that rows come in
 * bounded disorder and none is late. {@code row_number_et} is {@code ROW_NUMBER() OVER (PARTITION
 * BY id ORDER BY ts)} keep-first, the baseline of the others: {@code bloom_dedup_et} (the
 * documented sharded query with {@code on_time => DESCRIPTOR(ts)}, so by default {@code first_by =>
 * 'EVENT_TIME'}), {@code bloom_dedup_whole_et} (the same without {@code PARTITION BY}) and {@code
 * bloom_dedup_arrival_et} (the sharded query with {@code first_by => 'ARRIVAL'}: no rows wait for
 * the watermark). They run without mini-batch, where Flink's {@code ROW_NUMBER} keep-first by a
 * rowtime is insert-only and emitted at the watermark; {@code row_number_mb_et} is the same query
 * with mini-batch on, where Flink plans it as an updating rank. The input stops at its last row
 * without a final watermark: a first row within D of the end is not returned by either kind, and
 * with each id's first occurrence in the first pass no first row is there.
 */
public final class SqlBenchmark {

    /** System properties {@code bench.flink.KEY=VALUE} set the Flink option KEY for every query. */
    static final String FLINK_OPTION_PREFIX = "bench.flink.";

    /** Rounds when the command line names none. */
    static final int DEFAULT_ROUNDS = 3;

    /**
     * The bound of the event-time input's disorder in ms, when {@code bench.disorderMs} is unset.
     */
    static final long DEFAULT_DISORDER_MS = 1000;

    /** The system property that sets the event-time input's disorder bound D in ms. */
    static final String DISORDER_PROPERTY = "bench.disorderMs";

    /**
     * The system property that appends each query's medians to a CSV file ({@link SqlMedians}), one
     * line per backend and query, after the last round.
     */
    static final String CSV_PROPERTY = "bench.csv";

    /**
     * The system property that sets the time budget of one run ({@code 90m} unless set; an ISO-8601
     * duration or a number with s, m or h): a run that has not taken all its rows by then is
     * stopped and reported at the rows it took, marked "stopped at budget".
     */
    static final String BUDGET_PROPERTY = "bench.budget";

    /** The budget of one run when {@link #BUDGET_PROPERTY} is unset. */
    static final String DEFAULT_BUDGET = "90m";

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

    private SqlBenchmark() {}

    /**
     * One measured run ({@code round} 0: the warm-up); {@code load} the 1-minute load average;
     * {@code complete} false when the run stopped at its budget ({@link #BUDGET_PROPERTY}), {@code
     * records} then the rows done so far.
     */
    record Result(
            String query,
            String backend,
            int round,
            long records,
            double seconds,
            long stateBytes,
            long out,
            String load,
            long cpuNanos,
            long peakRssBytes,
            boolean complete) {
        double recordsPerSecond() {
            return records / seconds;
        }

        double cpuMicrosPerRow() {
            return cpuNanos / 1e3 / records;
        }
    }

    /** The disorder bound D of the event-time input, in ms ({@link #DISORDER_PROPERTY}). */
    static long disorderMs() {
        long d = Long.parseLong(System.getProperty(DISORDER_PROPERTY, "" + DEFAULT_DISORDER_MS));
        if (d < 1 || d >= 100_000) {
            throw new IllegalArgumentException(
                    DISORDER_PROPERTY + ": must be in [1, 100000) ms, got " + d);
        }
        return d;
    }

    /**
     * The event time of row {@code index}, in ms: the index plus a jitter in [0, {@code
     * disorderMs}) fixed per row (a 64-bit mix of the index, SplitMix64's finalizer).
     */
    static long eventTimeOf(long index, long disorderMs) {
        long z = (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return index + Math.floorMod(z, disorderMs);
    }

    /**
     * Runs the benchmark of {@code args}; on any failure exits the JVM with status 1, for a job
     * left running (a failed savepoint, say) would keep it alive and a script waiting.
     */
    public static void main(String[] args) {
        try {
            benchmark(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void benchmark(String[] args) throws Exception {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        long ids = args.length > 1 ? Long.parseLong(args[1]) : rows / 2;
        String[] backends = (args.length > 2 ? args[2] : "hashmap").split(",");
        List<String> queries =
                List.of(
                        (args.length > 3
                                        ? args[3]
                                        : "row_number,bloom_dedup,count_distinct,bloom_count_distinct")
                                .split(","));
        int rounds = args.length > 4 ? Integer.parseInt(args[4]) : DEFAULT_ROUNDS;
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds: must be at least 1, got " + rounds);
        }
        for (String q : queries) {
            sql(q, ids); // an unknown query fails before any run
        }
        Duration budget = JobOptions.duration(System.getProperty(BUDGET_PROPERTY, DEFAULT_BUDGET));
        String csvName = System.getProperty(CSV_PROPERTY);
        Path csv = csvName == null ? null : Path.of(csvName);
        if (csv != null) {
            SqlMedians.checkAppendable(csv); // a foreign file fails before any run
        }
        // Warm-up (not reported): each query once at a tenth of the size, so that the first
        // measured query does not pay for the JIT alone.
        for (String q : queries) {
            run(q, backends[0], rows / 10, Math.max(1, ids / 10), 0, budget);
        }
        List<Result> results = new ArrayList<>();
        for (String backend : backends) {
            for (int round = 1; round <= rounds; round++) {
                for (String q : SqlRounds.order(queries, round)) {
                    results.add(run(q, backend, rows, ids, round, budget));
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%n## SqlBenchmark: %,d rows of %,d distinct STRING ids, parallelism 1,"
                        + " mini-batch on, fpp 1%%, %d round(s)%n%n",
                rows,
                ids,
                rounds);
        if (queries.stream().anyMatch(SqlQueries::isEventTime)) {
            System.out.printf(
                    Locale.ROOT,
                    "Queries *%s: rowtime ts = row index ms + a jitter in [0, %d) ms,"
                            + " WATERMARK ts - %d ms.%n%n",
                    EVENT_TIME,
                    disorderMs(),
                    disorderMs());
        }
        if (queries.stream().anyMatch(SqlQueries::isUpdating)) {
            System.out.printf(
                    Locale.ROOT,
                    "Queries *%s: a retract changelog of %,d rows (+I of %,d values, -D of half"
                            + " of them %,d rows behind), %,d distinct ids at the end;"
                            + " bloom_count_distinct_updating at fpp %s.%n%n",
                    UPDATING,
                    UpdatingInput.changelogRows(ids),
                    2 * ids,
                    UpdatingInput.LAG,
                    ids,
                    System.getProperty(UPDATING_FPP_PROPERTY, "0.01"));
        }
        System.out.println(
                "| backend | round | query | records/s | vs exact | CPU us/row | state bytes | vs"
                        + " exact | rows out | peak RSS MiB | load (1 min) |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Result r : results) {
            Result exact =
                    results.stream()
                            .filter(
                                    x ->
                                            x.backend.equals(r.backend)
                                                    && x.round == r.round
                                                    && x.query.equals(SqlRounds.baseline(r.query)))
                            .findFirst()
                            .orElse(r);
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %d | %s | %,.0f | %.2fx | %.2f | %,d | %.3fx | %,d | %,d | %s |%n",
                    r.backend,
                    r.round,
                    r.query,
                    r.recordsPerSecond(),
                    r.recordsPerSecond() / exact.recordsPerSecond(),
                    r.cpuMicrosPerRow(),
                    r.stateBytes,
                    (double) r.stateBytes / exact.stateBytes,
                    r.out,
                    r.peakRssBytes >> 20,
                    r.load);
        }
        List<SqlRounds.Run> runs = new ArrayList<>();
        for (Result r : results) {
            runs.add(
                    new SqlRounds.Run(
                            r.backend,
                            r.query,
                            r.round,
                            r.recordsPerSecond(),
                            r.cpuMicrosPerRow()));
        }
        System.out.printf(Locale.ROOT, "%n### Medians of %d round(s)%n%n", rounds);
        for (String backend : backends) {
            System.out.print(SqlRounds.table(SqlRounds.summarize(runs, backend)));
        }
        if (results.stream().anyMatch(r -> !r.complete())) {
            System.out.printf(
                    Locale.ROOT,
                    "%nRuns stopped at the budget of %s: their records/s cover the rows done.%n",
                    budget);
        }
        if (csv != null) {
            SqlMedians.append(csv, SqlMedians.of(rows, ids, List.of(backends), results));
            System.out.println("appended to " + csv);
        }
    }

    private static Result run(
            String query, String backend, long rows, long ids, int round, Duration budget)
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
                r.peakRssBytes >> 20,
                r.load,
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
