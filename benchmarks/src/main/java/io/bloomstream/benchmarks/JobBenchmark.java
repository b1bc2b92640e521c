package io.bloomstream.benchmarks;

import io.bloomstream.flink.BloomDedup;
import io.bloomstream.flink.DedupConfig;
import io.bloomstream.flink.IdSelector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
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
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Job-level benchmark: the same input through a pass-through keyed job, Bloom dedup (global mode)
 * and the exact dedup a Flink user writes today (a {@code ValueState<Boolean>} per id), on the heap
 * and RocksDB backends, in one run. Prints records/s with ratios against the pass-through and exact
 * baselines of the same run, and state bytes per distinct id (the size of a canonical savepoint
 * taken once every record was processed, over the distinct ids).
 *
 * <p>Input: {@code distinct * duplication} longs: the distinct ids in a scrambled order, then
 * {@code duplication - 1} more passes over them. Throughput is measured where records enter the
 * pipeline (backpressure makes that the pace of the slowest operator), from the first to the last
 * real record.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.JobBenchmark
 * [distinct] [duplication] [backends] [pageSizes]}, e.g. {@code 10000000 2 hashmap,rocksdb 512}.
 */
public final class JobBenchmark {

    private static final AtomicLong SEEN = new AtomicLong();
    private static final AtomicLong INPUT = new AtomicLong();
    private static final AtomicLong FIRST_NANOS = new AtomicLong();
    private static final AtomicLong LAST_NANOS = new AtomicLong();

    private JobBenchmark() {}

    /** One measured run. */
    record Result(String pipeline, String backend, long records, double seconds, long stateBytes) {
        double recordsPerSecond() {
            return records / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        long distinct = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        int duplication = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        String[] backends = (args.length > 2 ? args[2] : "hashmap,rocksdb").split(",");
        String[] pages = (args.length > 3 ? args[3] : "512").split(",");
        long records = distinct * duplication;
        List<Result> results = new ArrayList<>();
        for (String backend : backends) {
            results.add(run("pass-through", backend, distinct, records, 0));
            for (String page : pages) {
                int bits = Integer.parseInt(page);
                String name = "bloom-" + (bits == -1 ? "auto" : page);
                results.add(run(name, backend, distinct, records, bits));
            }
            results.add(run("exact", backend, distinct, records, 0));
        }
        System.out.printf(
                Locale.ROOT,
                "%n## JobBenchmark: %,d distinct ids x %d = %,d records, p = 1%%, parallelism 1%n%n",
                distinct,
                duplication,
                records);
        System.out.println(
                "| backend | pipeline | records/s | vs pass-through | vs exact | state bytes/distinct id |");
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        for (Result r : results) {
            Result pass = find(results, r.backend, "pass-through");
            Result exact = find(results, r.backend, "exact");
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %,.0f | %.2fx | %.2fx | %.3f |%n",
                    r.backend,
                    r.pipeline,
                    r.recordsPerSecond(),
                    r.recordsPerSecond() / pass.recordsPerSecond(),
                    r.recordsPerSecond() / exact.recordsPerSecond(),
                    (double) r.stateBytes / distinct);
        }
    }

    private static Result find(List<Result> results, String backend, String pipeline) {
        return results.stream()
                .filter(r -> r.backend.equals(backend) && r.pipeline.equals(pipeline))
                .findFirst()
                .orElseThrow();
    }

    /** Id of record i: a permutation of i mod distinct (odd multiplier mod 2^64, then mod). */
    static long idOf(long index, long distinct) {
        return ((index % distinct) * 0x9E3779B97F4A7C15L) ^ 0x5DEECE66DL;
    }

    private static Result run(
            String pipeline, String backend, long distinct, long records, int page)
            throws Exception {
        SEEN.set(0);
        INPUT.set(0);
        FIRST_NANOS.set(0);
        LAST_NANOS.set(0);
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        Path checkpoints = Files.createTempDirectory("bloomstream-checkpoints");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        // After `records` real ids the source emits -1 markers until the job is stopped.
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        i -> i < records ? idOf(i, distinct) : -1L, Long.MAX_VALUE, Types.LONG);
        DataStream<Long> ids =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "ids")
                        .filter(new StampRealIds())
                        .name("real-ids");
        DataStream<Long> out;
        switch (pipeline.startsWith("bloom") ? "bloom" : pipeline) {
            case "pass-through":
                out =
                        ids.keyBy(id -> id, Types.LONG)
                                .process(new PassThrough())
                                .returns(Types.LONG)
                                .uid("pass");
                break;
            case "bloom":
                out =
                        BloomDedup.global(
                                ids,
                                IdSelector.ofLong(id -> id),
                                DedupConfig.builder()
                                        .expectedItems(distinct)
                                        .fpp(0.01)
                                        .pageBits(page)
                                        .fixed()
                                        .build());
                break;
            default:
                out =
                        ids.keyBy(id -> id, Types.LONG)
                                .process(new ExactDedup())
                                .returns(Types.LONG)
                                .uid("exact");
        }
        out.sinkTo(new CountingSink()).name("count");
        JobClient job = env.executeAsync(pipeline + "-" + backend);
        waitForInput(records);
        double seconds = (LAST_NANOS.get() - FIRST_NANOS.get()) / 1e9;
        Path dir = Files.createTempDirectory("bloomstream-savepoint");
        String savepoint =
                job.stopWithSavepoint(false, dir.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get();
        long bytes = directorySize(dir);
        deleteRecursively(dir);
        deleteRecursively(checkpoints);
        Result r = new Result(pipeline, backend, records, seconds, bytes);
        System.out.printf(
                Locale.ROOT,
                "%s/%s: %d out, %.2f s, %,.0f records/s, savepoint %,d bytes (%s)%n",
                backend,
                pipeline,
                SEEN.get(),
                seconds,
                r.recordsPerSecond(),
                bytes,
                savepoint);
        return r;
    }

    /** Polls until every real record has entered the pipeline. */
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
    static final class StampRealIds
            implements org.apache.flink.api.common.functions.FilterFunction<Long> {
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

    /** Forwards every record (the keyed baseline). */
    static final class PassThrough extends KeyedProcessFunction<Long, Long, Long> {
        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) {
            out.collect(value);
        }
    }

    /** Exact dedup: one ValueState<Boolean> per id. */
    static final class ExactDedup extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<Boolean> seen;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            if (seen.value() == null) {
                seen.update(Boolean.TRUE);
                out.collect(value);
            }
        }
    }

    /** Counts the records that come out. */
    static final class CountingSink implements Sink<Long> {
        @Override
        public SinkWriter<Long> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Long element, Context context) {
                    SEEN.incrementAndGet();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
