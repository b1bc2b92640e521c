package io.bloomstream.flink.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.JobWaits;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link BloomInspect} against savepoints of real dedup jobs, global and per key, plain and exact,
 * written from both backends, compared with what the jobs passed.
 *
 * <p>Each job judges {@value #EVENTS} events (draws from {@value #RANGE} ids, fixed seed) at
 * parallelism 1, then a sentinel id: when the sentinel reaches the sink every event before it was
 * judged, and the job is stopped with a savepoint. The report must then hold exactly the ids passed
 * as its recorded items (each passed id is added once), and its estimate from the set bits must lie
 * within 3 of its standard errors of them (a 99.7% bound for an estimator the tests of {@code
 * Estimate} check to be unbiased).
 */
class BloomInspectITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    static final int EVENTS = 30_000;
    static final int RANGE = 25_000;
    static final int KEYS = 7;
    static final String SENTINEL = "sentinel-0";

    static final String[] IDS = ids(new Random(4301));

    private static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();
    private static volatile CountDownLatch sentinelPassed = new CountDownLatch(1);

    static String[] ids(Random random) {
        String[] ids = new String[EVENTS + 1];
        for (int i = 0; i < EVENTS; i++) {
            int id = random.nextInt(RANGE);
            ids[i] = (id % KEYS) + ":id-" + id;
        }
        ids[EVENTS] = SENTINEL;
        return ids;
    }

    static DedupConfig config(boolean exact) {
        return DedupConfig.builder().expectedItems(20_000).fpp(0.01).exact(exact).build();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalDedup(Backend backend, @TempDir Path tmp) throws Exception {
        String savepoint = run(backend, false, false, tmp);
        FilterReport r =
                BloomInspect.dedup(
                        reader(), savepoint, new HashMapStateBackend(), "bloom-dedup", null);
        assertMatchesPassed(r);
        assertThat(r.keys()).as("shards holding ids, of 1024").isEqualTo(1024);
        assertThat(r.exactEntries()).isEqualTo(-1);
        assertThat(r.shape()).containsEntry("shards", "1024");
        assertThat(BloomInspect.defaultUids(savepoint)).containsExactly("bloom-dedup");
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void perKeyExactDedup(Backend backend, @TempDir Path tmp) throws Exception {
        String savepoint = run(backend, true, true, tmp);
        assertThatThrownBy(
                        () ->
                                BloomInspect.dedup(
                                        reader(),
                                        savepoint,
                                        new HashMapStateBackend(),
                                        "bloom-dedup",
                                        null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("per key")
                .hasMessageContaining("key type");
        FilterReport r =
                BloomInspect.dedup(
                        reader(),
                        savepoint,
                        new HashMapStateBackend(),
                        "bloom-dedup",
                        Types.STRING);
        assertMatchesPassed(r);
        assertThat(r.keys()).as("keys, and the sentinel's").isEqualTo(KEYS + 1);
        assertThat(r.exactEntries()).as("exact entries: one per id passed").isEqualTo(OUT.size());
        assertThat(r.fullest()).hasSize(BloomInspect.FULLEST_KEYS);
        assertThat(r.fullest().get(0).fill()).isGreaterThanOrEqualTo(r.fullest().get(1).fill());
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void refusesAnAbsentUid(Backend backend, @TempDir Path tmp) throws Exception {
        String savepoint = run(backend, false, false, tmp);
        assertThatThrownBy(
                        () ->
                                BloomInspect.dedup(
                                        reader(),
                                        savepoint,
                                        new HashMapStateBackend(),
                                        "no-such-uid",
                                        null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no state of an operator with uid 'no-such-uid'");
    }

    private static void assertMatchesPassed(FilterReport r) {
        long passed = OUT.size();
        assertThat(new HashSet<>(OUT)).hasSize((int) passed);
        assertThat(r.itemsAdded()).as("items recorded: the ids passed").isEqualTo(passed);
        assertThat(Math.abs(r.estimate().estimate() - passed))
                .as(
                        "estimate %.1f (standard error %.1f) against %d passed",
                        r.estimate().estimate(), r.estimate().standardError(), passed)
                .isLessThanOrEqualTo(3 * r.estimate().standardError());
        assertThat(r.estimate().standardError()).isPositive();
        assertThat(r.pages()).isPositive();
        assertThat(r.pageBytes()).isPositive();
        assertThat(r.stateBytes()).isGreaterThan(r.pageBytes());
        assertThat(r.targetFpp()).isEqualTo(0.01);
        assertThat(r.fullestStageFpp()).isPositive().isLessThan(0.01);
        assertThat(r.maxStages()).isEqualTo(1);
        assertThat(r.generations()).isEqualTo(1);
        assertThat(r.meanFill()).isBetween(0.01, 0.6);
    }

    /** Runs the dedup job over {@link #IDS}, stops it with a savepoint, returns its path. */
    private static String run(Backend backend, boolean perKey, boolean exact, Path tmp)
            throws Exception {
        OUT.clear();
        sentinelPassed = new CountDownLatch(1);
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<String> in =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> i <= EVENTS ? IDS[i.intValue()] : "",
                                        Long.MAX_VALUE,
                                        Types.STRING),
                                WatermarkStrategy.noWatermarks(),
                                "ids")
                        .uid("ids")
                        .filter(s -> !s.isEmpty())
                        .uid("real");
        IdSelector<String> id = IdSelector.ofString(s -> s);
        DataStream<String> passed =
                perKey
                        ? BloomDedup.perKey(
                                in.keyBy(s -> s.substring(0, s.indexOf(':') + 1), Types.STRING),
                                id,
                                config(exact))
                        : BloomDedup.global(in, id, config(exact));
        passed.sinkTo(new CollectSink());
        JobClient job = env.executeAsync("inspected");
        JobWaits.until(job, sentinelPassed, "the sentinel passed");
        return job.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
    }

    private static StreamExecutionEnvironment reader() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    /** Collects into {@link #OUT} (the mini cluster runs in this JVM). */
    static final class CollectSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context context) {
                    OUT.add(element);
                    if (element.equals(SENTINEL)) {
                        sentinelPassed.countDown();
                    }
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
