package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.FailOnce;
import io.bloomstream.testing.KeyedEvents;
import io.bloomstream.testing.MiniClusters;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mini-cluster tests of {@link BloomDedup} at parallelism 2 on two task managers, on the heap and
 * RocksDB backends, with Kryo disabled ({@code pipeline.generic-types: false}).
 */
public class BloomDedupITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    /** Distinct ids; the stream repeats each of them. */
    private static final int DISTINCT = 20_000;

    private static final double FPP = 0.01;

    /**
     * Event i: id (i * 7919) mod DISTINCT, keyed by id mod 16; each id occurs TOTAL / DISTINCT
     * times.
     */
    static String event(long i) {
        long id = (i * 7919) % DISTINCT;
        return "k" + (id % 16) + "," + id;
    }

    /** A job on {@code backend} at parallelism 2 that restarts up to three times at once. */
    public static StreamExecutionEnvironment env(Backend backend) {
        Configuration conf = backend.jobConfig();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        return env;
    }

    private static DedupConfig config() {
        // Sized for a tenth of the ids per key, so the cascade grows while the job runs.
        return DedupConfig.builder().expectedItems(DISTINCT / 16 / 10).fpp(FPP).build();
    }

    /** Checks "distinct ids minus false positives" for an output that must hold no repeat. */
    private static void assertDedupOutput(List<String> out) {
        Set<String> unique = new HashSet<>(out);
        assertThat(unique).as("no id twice").hasSize(out.size());
        long falselyDropped = DISTINCT - out.size();
        // Each first occurrence is dropped with at most the compound rate FPP: binomial bound.
        double bound = DISTINCT * FPP + 4.5 * Math.sqrt(DISTINCT * FPP * (1 - FPP));
        assertThat((double) falselyDropped)
                .as("%d of %d first occurrences dropped", falselyDropped, DISTINCT)
                .isBetween(0.0, bound);
        for (String e : out) {
            assertThat(e)
                    .isEqualTo(event(Long.parseLong(KeyedEvents.id(e)) * inverse() % DISTINCT));
        }
    }

    /** The inverse of 7919 modulo DISTINCT, to check each output line is a real event. */
    private static long inverse() {
        for (long x = 1; x < DISTINCT; x++) {
            if ((7919 * x) % DISTINCT == 1) {
                return x;
            }
        }
        throw new AssertionError();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void outputIsDistinctIdsMinusFalsePositives(Backend backend) throws Exception {
        StreamExecutionEnvironment env = env(backend);
        long total = 4L * DISTINCT;
        DataStream<String> events =
                env.fromSequence(0, total - 1).map(BloomDedupITCase::event).returns(Types.STRING);
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it =
                BloomDedup.perKey(
                                events.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), config())
                        .executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        assertDedupOutput(out);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restartFromCheckpointGivesTheSameOutputAsACleanRun(Backend backend, @TempDir Path tmp)
            throws Exception {
        List<String> clean = runToFiles(backend, tmp.resolve("clean"), false);
        List<String> failed = runToFiles(backend, tmp.resolve("failed"), true);
        assertThat(FailOnce.FAILED.get()).as("the failure was injected").isTrue();
        assertDedupOutput(clean);
        Collections.sort(clean);
        Collections.sort(failed);
        assertThat(failed).isEqualTo(clean);
    }

    /**
     * Runs the job into an exactly-once FileSink. The source is rate limited and has parallelism 1,
     * so each key sees its events in one order and a clean run is deterministic.
     */
    private static List<String> runToFiles(Backend backend, Path dir, boolean injectFailure)
            throws Exception {
        FailOnce.reset(injectFailure);
        StreamExecutionEnvironment env = env(backend);
        env.enableCheckpointing(100);
        long total = 3L * DISTINCT;
        DataGeneratorSource<String> source =
                new DataGeneratorSource<>(
                        BloomDedupITCase::event,
                        total,
                        RateLimiterStrategy.perSecond(30_000),
                        Types.STRING);
        DataStream<String> events =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "events")
                        .setParallelism(1);
        DataStream<String> deduped =
                BloomDedup.perKey(
                        events.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), config());
        deduped.map(new FailOnce<String>(DISTINCT / 4))
                .returns(Types.STRING)
                .sinkTo(
                        FileSink.forRowFormat(
                                        new org.apache.flink.core.fs.Path(dir.toUri()),
                                        new SimpleStringEncoder<String>())
                                .build());
        env.execute("dedup-" + backend + (injectFailure ? "-failure" : "-clean"));
        return readFinishedParts(dir);
    }

    public static List<String> readFinishedParts(Path dir) throws IOException {
        List<String> lines = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                if (!f.getFileName().toString().startsWith(".")) {
                    lines.addAll(Files.readAllLines(f));
                }
            }
        }
        return lines;
    }

    /** Global mode: one logical filter across all subtasks. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalModeDropsDuplicatesAcrossTheWholeStream(Backend backend) throws Exception {
        StreamExecutionEnvironment env = env(backend);
        DataStream<String> events =
                env.fromSequence(0, 3L * DISTINCT - 1)
                        .map(BloomDedupITCase::event)
                        .returns(Types.STRING);
        DedupConfig config =
                DedupConfig.builder().expectedItems(DISTINCT).fpp(FPP).shards(64).build();
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it =
                BloomDedup.global(events, KeyedEvents.idSelector(), config).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        assertDedupOutput(out);
        Map<String, Integer> perKey = new HashMap<>();
        out.forEach(e -> perKey.merge(KeyedEvents.key(e), 1, Integer::sum));
        assertThat(perKey).hasSize(16);
    }

    private static final java.util.concurrent.atomic.AtomicLong ID_READS =
            new java.util.concurrent.atomic.AtomicLong();

    /**
     * Global mode reads (and hashes) each event's id once in the whole job: in its step before the
     * {@code keyBy}; the shard selector and the dedup operator use the hash carried with the event.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalModeReadsEachIdOnce(Backend backend) throws Exception {
        StreamExecutionEnvironment env = env(backend);
        DataStream<String> events =
                env.fromSequence(0, 3L * DISTINCT - 1)
                        .map(BloomDedupITCase::event)
                        .returns(Types.STRING);
        IdSelector<String> counted =
                IdSelector.ofString(
                        e -> {
                            ID_READS.incrementAndGet();
                            return e.substring(e.indexOf(',') + 1);
                        });
        DedupConfig config = DedupConfig.builder().expectedItems(DISTINCT).fpp(FPP).build();
        ID_READS.set(0);
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it =
                BloomDedup.global(events, counted, config).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        assertThat(ID_READS.get())
                .as("id reads for %s events", 3 * DISTINCT)
                .isEqualTo(3L * DISTINCT);
        assertDedupOutput(out);
    }
}
