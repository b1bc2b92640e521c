package io.bloomstream.benchmarks;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFilterFunction;
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

/**
 * Job-level benchmark, one run of a matrix: for each number of distinct ids, backend (heap
 * "hashmap", "rocksdb") and parallelism, the same input through a pass-through keyed job, Bloom
 * dedup with a default config ({@code BloomDedup.global(stream, IdSelector.ofLong(..),
 * DedupConfig.builder().expectedItems(n).fpp(p).build())}: what a user gets, the headline row), the
 * named variants of that config in {@link JobPipelines#VARIANTS}, and the exact dedup a Flink user
 * writes today (a {@code ValueState<Boolean>} per id). Prints a Markdown table with ratios against
 * the pass-through and exact runs of the same cell and writes it, with a CSV file of the runs
 * ({@link JobRun}) that {@link JobThroughputChart} draws.
 *
 * <p>Input: {@code ids * duplication} longs: the distinct ids in a scrambled order, then {@code
 * duplication - 1} more passes, spread over the source's parallel readers. Throughput is measured
 * where records enter the pipeline (backpressure makes that the pace of the slowest operator), from
 * the first to the last record; state bytes per distinct id are the size of a canonical savepoint
 * taken after the last record, over the distinct ids seen.
 *
 * <p>Budgets: a run that has not taken all its records in its budget (exact dedup: {@code
 * --exact-budget}, default 20 minutes; the others {@code --budget}, default 4 hours) is stopped
 * with a savepoint and reported as far as it got: records done, records/s so far, "stopped at
 * budget". A run whose job fails is reported "failed" and the matrix goes on.
 *
 * <p>Usage: {@code java -Xmx10g -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.JobBenchmark [--ids=1000000,10000000,100000000] [--duplication=2 |
 * --duplicates=0.1] [--rounds=1] [--fpp=0.01] [--backends=hashmap,rocksdb,rocksdb-bloom]
 * [--parallelism=1,2] [--pipelines=pass-through, bloom-default,bloom-fixed,exact]
 * [--exact-budget=20m] [--budget=4h] [--csv=benchmarks/job-throughput.csv]}; the Markdown goes to
 * the CSV's name with {@code .md}.
 *
 * <p>Goals: after the tables (the medians' when there are several rounds), a table of issue 42's
 * goals ({@link JobGoals#ISSUE_42}) for each cell where their contenders ran, with the ratio of
 * medians, its spread over the rounds and whether it is met; it is printed and written to the
 * {@code .md} file with the rest. Issue 42 sets them on string ids: {@code
 * --pipelines=pass-through:string,bloom-default:string,exact:string,bloom-exact:string}.
 */
public final class JobBenchmark {

    static final int MAX_READERS = 64;
    private static final AtomicLongArray INPUT = new AtomicLongArray(MAX_READERS);
    private static final AtomicLongArray FIRST_NANOS = new AtomicLongArray(MAX_READERS);
    private static final AtomicLongArray LAST_NANOS = new AtomicLongArray(MAX_READERS);
    private static final AtomicLong SEEN = new AtomicLong();

    private JobBenchmark() {}

    public static void main(String[] args) throws Exception {
        JobOptions o = JobOptions.parse(args);
        if (o.csv().getParent() != null) {
            Files.createDirectories(o.csv().getParent());
        }
        List<JobRun> runs = new ArrayList<>();
        List<Integer> roundOf = new ArrayList<>();
        List<String> contenders = new ArrayList<>();
        for (String backend : o.backends()) {
            for (String pipeline : o.pipelines()) {
                if (!o.skip().contains(backend + "/" + pipeline)) {
                    contenders.add(backend + " " + pipeline);
                }
            }
        }
        try (Writer csv = Files.newBufferedWriter(o.csv())) {
            csv.write(JobRun.CSV_HEADER + "\n");
            for (int round = 1; round <= o.rounds(); round++) {
                for (long ids : o.ids()) {
                    for (int parallelism : o.parallelism()) {
                        for (String contender : SqlRounds.order(contenders, round)) {
                            String[] bp = contender.split(" ");
                            JobRun r =
                                    run(
                                            o,
                                            bp[1],
                                            bp[0],
                                            parallelism,
                                            ids,
                                            round <= o.savepointRounds());
                            runs.add(r);
                            roundOf.add(round);
                            csv.write(r.csvLine() + "\n");
                            csv.flush(); // a crash later keeps the runs so far
                        }
                    }
                }
            }
        }
        String table =
                String.format(
                                Locale.ROOT,
                                "## JobBenchmark: %s distinct ids x %.4f, p = %s, exact budget %s,"
                                        + " others %s%n%n",
                                Arrays.toString(o.ids()),
                                o.duplication(),
                                o.fpp(),
                                o.exactBudget(),
                                o.budget())
                        + JobRun.markdown(runs);
        if (o.rounds() > 1) {
            table += JobRounds.summary(runs, roundOf);
        }
        table +=
                JobGoals.markdown(
                        JobGoals.ISSUE_42, JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf));
        String name = o.csv().getFileName().toString().replaceFirst("\\.csv$", "") + ".md";
        Path md = o.csv().resolveSibling(name);
        Files.writeString(md, table);
        System.out.printf(Locale.ROOT, "%n%s%nwrote %s and %s%n", table, o.csv(), md);
    }

    /** Id of record i: a permutation of i mod distinct (odd multiplier mod 2^64, then xor). */
    static long idOf(long index, long distinct) {
        return ((index % distinct) * 0x9E3779B97F4A7C15L) ^ 0x5DEECE66DL;
    }

    private static JobRun run(
            JobOptions o,
            String pipeline,
            String backend,
            int parallelism,
            long distinct,
            boolean savepoint)
            throws Exception {
        long records = Math.round(distinct * o.duplication());
        for (int i = 0; i < MAX_READERS; i++) {
            INPUT.set(i, 0);
            FIRST_NANOS.set(i, 0);
            LAST_NANOS.set(i, 0);
        }
        SEEN.set(0);
        System.gc(); // the previous run's state is garbage now: not this run's pauses
        long heapBefore = Memory.liveHeap();
        long rssBefore = Memory.rss();
        Configuration conf = new Configuration();
        conf.set(
                StateBackendOptions.STATE_BACKEND,
                backend.equals("rocksdb-bloom") ? "rocksdb" : backend);
        if (backend.equals("rocksdb-bloom")) {
            // what a tuned user tries first: RocksDB's own bloom filters on its SST files
            conf.set(
                    org.apache.flink.state.rocksdb.RocksDBConfigurableOptions.USE_BLOOM_FILTER,
                    true);
        }
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        Path checkpoints = Files.createTempDirectory("bloomstream-checkpoints");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        // The sequence [0, P * S) splits into P equal ranges of S, one per reader. Reader k emits
        // the records k, k + P, k + 2P, ... then -1 markers until the job is stopped (so that a
        // savepoint can be taken after the last record).
        long perReader = Long.MAX_VALUE / parallelism;
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        i -> {
                            long record = (i % perReader) * parallelism + i / perReader;
                            return record < records ? idOf(record, distinct) : -1L;
                        },
                        perReader * parallelism,
                        Types.LONG);
        DataStream<Long> ids =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "ids")
                        .filter(new StampRealIds())
                        .name("real-ids");
        sinkCounting(JobPipelines.pipeline(pipeline, ids, distinct, o.fpp()));
        // exact dedup on long or string ids ("exact:string") has the exact budget
        Duration budget = JobPipelines.isExact(pipeline) ? o.exactBudget() : o.budget();
        JobClient job =
                env.executeAsync(pipeline + "-" + backend + "-p" + parallelism + "-" + distinct);
        String status = waitForInput(records, budget, job);
        long done = sum(INPUT);
        long heap = status.startsWith("failed") ? -1 : Memory.liveHeap() - heapBefore;
        long rss = status.startsWith("failed") || rssBefore < 0 ? -1 : Memory.rss() - rssBefore;
        double seconds = (max(LAST_NANOS) - min(FIRST_NANOS)) / 1e9;
        long bytes = -1;
        if (!savepoint && !status.startsWith("failed")) {
            job.cancel().get(10, TimeUnit.MINUTES); // state measured in earlier rounds
            // the cancelled job's readers must be gone before the next run resets the counters
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (System.nanoTime() < deadline) {
                try {
                    if (job.getJobStatus().get().isGloballyTerminalState()) {
                        break;
                    }
                } catch (IllegalStateException | java.util.concurrent.ExecutionException e) {
                    break; // the job's mini-cluster has shut down
                }
                Thread.sleep(100);
            }
            Thread.sleep(2000); // and its task threads have seen the cancellation
        } else if (!status.startsWith("failed")) {
            Path dir = Files.createTempDirectory("bloomstream-savepoint");
            try {
                job.stopWithSavepoint(false, dir.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(60, TimeUnit.MINUTES);
                bytes = directorySize(dir);
                job.getJobExecutionResult().get(10, TimeUnit.MINUTES);
            } catch (Exception e) {
                status = status + "; no savepoint: " + e;
                job.cancel().get(10, TimeUnit.MINUTES);
            } finally {
                deleteRecursively(dir);
            }
        }
        deleteRecursively(checkpoints);
        long inState = sum(INPUT); // the readers published their counts when they closed
        JobRun r =
                new JobRun(
                        distinct,
                        o.duplication(),
                        o.fpp(),
                        backend,
                        parallelism,
                        pipeline,
                        done,
                        seconds,
                        bytes,
                        inState,
                        status,
                        heap,
                        rss);
        System.out.printf(
                Locale.ROOT,
                "%s p%d %s %,d ids: %,d records in %.2f s, %,.0f records/s, %,d out,"
                        + " savepoint %,d bytes (%.3f per distinct id), heap %,d MiB, RSS %,d MiB,"
                        + " %s%n",
                backend,
                parallelism,
                pipeline,
                distinct,
                done,
                seconds,
                r.recordsPerSecond(),
                SEEN.get(),
                bytes,
                r.stateBytesPerDistinctId(),
                heap >> 20,
                rss >> 20,
                status);
        return r;
    }

    /**
     * Polls until every record has entered the pipeline, the budget is spent or the job has ended.
     *
     * @return {@link JobRun#COMPLETE}, {@link JobRun#STOPPED_AT_BUDGET} or "failed: reason"
     */
    private static String waitForInput(long records, Duration budget, JobClient job)
            throws Exception {
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        long nextStatus = start;
        while (sum(INPUT) < records) {
            long now = System.nanoTime();
            if (now - deadline > 0) {
                return JobRun.STOPPED_AT_BUDGET;
            }
            if (now - nextStatus > 0) {
                nextStatus = now + TimeUnit.SECONDS.toNanos(1);
                JobStatus s = job.getJobStatus().get(1, TimeUnit.MINUTES);
                if (s.isGloballyTerminalState()) {
                    try {
                        job.getJobExecutionResult().get(1, TimeUnit.MINUTES);
                        return "failed: the job ended as " + s + " before its last record";
                    } catch (Exception e) {
                        Throwable root = e;
                        while (root.getCause() != null) {
                            root = root.getCause();
                        }
                        return "failed: " + root;
                    }
                }
            }
            Thread.sleep(20);
        }
        return JobRun.COMPLETE;
    }

    private static long sum(AtomicLongArray a) {
        long s = 0;
        for (int i = 0; i < a.length(); i++) {
            s += a.get(i);
        }
        return s;
    }

    private static long max(AtomicLongArray a) {
        long m = 0;
        for (int i = 0; i < a.length(); i++) {
            m = Math.max(m, a.get(i));
        }
        return m;
    }

    private static long min(AtomicLongArray a) {
        long m = Long.MAX_VALUE;
        for (int i = 0; i < a.length(); i++) {
            if (a.get(i) != 0) {
                m = Math.min(m, a.get(i));
            }
        }
        return m == Long.MAX_VALUE ? 0 : m;
    }

    /**
     * Drops the -1 markers and counts the real records per reader: its count, first and latest time
     * are published every 1024 records, at its first marker and when it closes, so readers do not
     * contend on a shared counter.
     */
    static final class StampRealIds extends RichFilterFunction<Long> {
        private transient int reader;
        private transient long count;
        private transient long published;
        private transient long last;

        @Override
        public void open(OpenContext ctx) {
            reader = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        }

        @Override
        public boolean filter(Long id) {
            if (id == -1L) {
                if (published != count) {
                    publish();
                }
                return false;
            }
            last = System.nanoTime();
            if (count++ == 0) {
                FIRST_NANOS.set(reader, last);
            }
            if ((count & 1023) == 0) {
                publish();
            }
            return true;
        }

        @Override
        public void close() {
            publish(); // the records before a stop-with-savepoint's barrier
        }

        private void publish() {
            LAST_NANOS.set(reader, last);
            INPUT.set(reader, count);
            published = count;
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

    private static <T> void sinkCounting(DataStream<T> out) {
        out.sinkTo(new CountingSink<T>()).name("count");
    }

    /** Counts the records that come out. */
    static final class CountingSink<T> implements Sink<T> {
        @Override
        public SinkWriter<T> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                private long n;

                @Override
                public void write(T element, Context context) {
                    if ((++n & 1023) == 0) {
                        SEEN.addAndGet(1024);
                    }
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {
                    SEEN.addAndGet(n & 1023);
                }
            };
        }
    }
}
