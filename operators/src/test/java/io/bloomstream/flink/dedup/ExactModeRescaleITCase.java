package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
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
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Exact mode ({@link DedupConfig#exact()}) behind a deliberately bad filter, on a mini cluster in
 * global mode, compared with an exact reference (a {@code HashSet} of the ids seen).
 *
 * <p>The filter: fpp 0.3, fixed growth, 16 shards sized for {@value #EXPECTED_ITEMS} ids, that is
 * 94 per shard plus the headroom of {@link BloomDedup#itemsPerShard} (4 standard deviations): 133,
 * about half of the 278 distinct ids a shard gets from the first part (4,440 distinct ids). So a
 * shard's false-positive rate climbs from 0 past 0.3 at capacity to about 0.6 (two hashes at 2.5
 * bits per expected id), and the filter alone drops about 30% of first occurrences (the mean of (1
 * - e^(-0.8 x))^2 over x, the fill against capacity, from 0 to 2). The control runs the first part
 * in plain mode and asserts that at least {@value #CONTROL_MIN_DROPPED_PERCENT}% of its first
 * occurrences are dropped: a binomial standard deviation over 4,440 is under 1%, so the bound is
 * far below the mean, and the control shows the filter bad enough for the exact run to mean
 * something.
 *
 * <p>The exact run: at parallelism 2 the first part of the stream, then a stop-with-savepoint once
 * every one of its distinct ids has passed (exact mode: exactly those), then a restore at
 * parallelism 3 (a rescale: the shards move with their filters and exact entries) for the second
 * part, whose ids mix ids of the first part and new ones. Every distinct id must pass exactly once
 * over both runs: no first occurrence dropped, no duplicate passed, across the rescale.
 */
class ExactModeRescaleITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    static final int FIRST_EVENTS = 8_000;
    static final int SECOND_EVENTS = 6_000;
    static final long EXPECTED_ITEMS = 1_500;
    static final int CONTROL_MIN_DROPPED_PERCENT = 20;

    /** The first part's ids: 8,000 draws from 6,000 (about 4,400 distinct). */
    static final long[] FIRST = draws(new Random(3101), FIRST_EVENTS, 6_000);

    /** The second part's ids: 6,000 draws from 9,000 (old and new ones). */
    static final long[] SECOND = draws(new Random(3102), SECOND_EVENTS, 9_000);

    private static final AtomicLong ENTERED = new AtomicLong();
    private static final ConcurrentLinkedQueue<Long> OUT = new ConcurrentLinkedQueue<>();
    private static volatile CountDownLatch firstRunDone = new CountDownLatch(1);
    private static volatile int firstRunDistinct;

    static long[] draws(Random random, int count, int range) {
        long[] ids = new long[count];
        for (int i = 0; i < count; i++) {
            ids[i] = random.nextInt(range);
        }
        return ids;
    }

    static DedupConfig config(boolean exact) {
        return DedupConfig.builder()
                .expectedItems(EXPECTED_ITEMS)
                .fpp(0.3)
                .fixed()
                .shards(16)
                .seed(31)
                .exact(exact)
                .build();
    }

    /** The reference: each distinct id once, in the order of its first occurrence. */
    static Set<Long> distinct(long[]... parts) {
        Set<Long> seen = new LinkedHashSet<>();
        for (long[] part : parts) {
            for (long id : part) {
                seen.add(id);
            }
        }
        return seen;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void controlBadFilterAloneDropsManyFirstOccurrences(Backend backend) throws Exception {
        OUT.clear();
        StreamExecutionEnvironment env = env(backend, 2, null);
        DataStream<Long> in =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> FIRST[i.intValue()], FIRST_EVENTS, Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "control")
                        .setParallelism(1);
        BloomDedup.global(in, IdSelector.ofLong(x -> x), config(false)).sinkTo(new CollectSink());
        env.execute("exact-control");
        int distinct = distinct(FIRST).size();
        List<Long> out = new ArrayList<>(OUT);
        assertThat(out).doesNotHaveDuplicates();
        long dropped = distinct - out.size();
        System.out.printf(
                "exact-mode control (%s): the fpp 0.3 filter alone dropped %d of %d first"
                        + " occurrences%n",
                backend, dropped, distinct);
        assertThat(dropped * 100)
                .as("first occurrences the bad filter drops in plain mode, of %d", distinct)
                .isGreaterThanOrEqualTo((long) CONTROL_MIN_DROPPED_PERCENT * distinct);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void exactModePassesEveryFirstOccurrenceAcrossARescale(Backend backend, @TempDir Path tmp)
            throws Exception {
        OUT.clear();
        ENTERED.set(0);
        firstRunDistinct = distinct(FIRST).size();
        firstRunDone = new CountDownLatch(1);

        // Run 1 at parallelism 2: FIRST, then -1 markers (filtered) until stopped with a savepoint.
        StreamExecutionEnvironment env1 = env(backend, 2, null);
        DataStream<Long> first =
                env1.fromSource(
                                new DataGeneratorSource<>(
                                        i -> i < FIRST_EVENTS ? FIRST[i.intValue()] : -1L,
                                        Long.MAX_VALUE,
                                        Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "first")
                        .uid("source-first")
                        .setParallelism(1)
                        .filter(ExactModeRescaleITCase::countReal)
                        .setParallelism(1);
        BloomDedup.global(first, IdSelector.ofLong(x -> x), config(true)).sinkTo(new CollectSink());
        JobClient job = env1.executeAsync("exact-first");
        awaitFirstRun(job);
        String savepoint =
                job.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        // Run 2 at parallelism 3 from the savepoint: SECOND, old and new ids.
        StreamExecutionEnvironment env2 = env(backend, 3, savepoint);
        DataStream<Long> second =
                env2.fromSource(
                                new DataGeneratorSource<>(
                                        i -> SECOND[i.intValue()], SECOND_EVENTS, Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "second")
                        .uid("source-second")
                        .setParallelism(1);
        BloomDedup.global(second, IdSelector.ofLong(x -> x), config(true))
                .sinkTo(new CollectSink());
        env2.execute("exact-second");

        List<Long> out = new ArrayList<>(OUT);
        assertThat(out)
                .as("every distinct id exactly once over both runs")
                .containsExactlyInAnyOrderElementsOf(distinct(FIRST, SECOND));
    }

    /** Waits until every distinct id of the first part passed; fails at once if the job ends. */
    private static void awaitFirstRun(JobClient job) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!firstRunDone.await(200, TimeUnit.MILLISECONDS)) {
            if (job.getJobStatus().get().isGloballyTerminalState()) {
                job.getJobExecutionResult().get(); // throws the job's failure
                throw new AssertionError("the first run ended before it was stopped");
            }
            assertThat(System.nanoTime())
                    .as("every distinct id of the first part passed (%d so far)", OUT.size())
                    .isLessThan(deadline);
        }
    }

    private static StreamExecutionEnvironment env(
            Backend backend, int parallelism, String restore) {
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore);
            conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        }
        return StreamExecutionEnvironment.getExecutionEnvironment(conf);
    }

    private static boolean countReal(Long id) {
        if (id < 0) {
            return false;
        }
        ENTERED.incrementAndGet();
        checkFirstRunDone();
        return true;
    }

    private static void checkFirstRunDone() {
        if (ENTERED.get() >= FIRST_EVENTS && OUT.size() >= firstRunDistinct) {
            firstRunDone.countDown();
        }
    }

    /** Collects into {@link #OUT} (the mini cluster runs in this JVM). */
    static final class CollectSink implements Sink<Long> {
        @Override
        public SinkWriter<Long> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Long element, Context context) {
                    OUT.add(element);
                    checkFirstRunDone();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
