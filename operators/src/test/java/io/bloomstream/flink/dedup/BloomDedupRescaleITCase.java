package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.KeyedEvents;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
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
 * A real savepoint of the dedup job taken at parallelism 2 restores at 1 and at 3: no id of the
 * first run passes again, and new ids pass (minus false positives).
 */
class BloomDedupRescaleITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int FIRST = 5_000;
    private static final int NEW = 2_000;
    private static final AtomicLong ENTERED = new AtomicLong();

    /**
     * Opens once every first-run id has entered the pipeline and the dedup task is emitting (so all
     * tasks run, which a savepoint needs); at most ~100 ids are false positives.
     */
    private static volatile CountDownLatch firstRunDone = new CountDownLatch(1);

    private static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();

    static String event(long i) {
        return "k" + (i % 37) + "," + i;
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

    private static DedupConfig config() {
        return DedupConfig.builder().expectedItems(1000).fpp(0.01).build();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void savepointAtTwoRestoresAtOneAndThree(Backend backend, @TempDir Path tmp) throws Exception {
        // Run 1 at parallelism 2: ids [0, FIRST), then -1 markers until stopped with a savepoint.
        ENTERED.set(0);
        OUT.clear();
        firstRunDone = new CountDownLatch(1);
        StreamExecutionEnvironment env1 = env(backend, 2, null);
        DataGeneratorSource<Long> endless =
                new DataGeneratorSource<>(i -> i < FIRST ? i : -1L, Long.MAX_VALUE, Types.LONG);
        DataStream<String> first =
                env1.fromSource(endless, WatermarkStrategy.noWatermarks(), "first")
                        .uid("source-first")
                        .setParallelism(1)
                        .filter(BloomDedupRescaleITCase::countReal)
                        .setParallelism(1)
                        .map(BloomDedupRescaleITCase::event)
                        .returns(Types.STRING);
        BloomDedup.perKey(first.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), config())
                .sinkTo(new CollectSink());
        JobClient job = env1.executeAsync("rescale-first");
        assertThat(firstRunDone.await(2, TimeUnit.MINUTES)).as("first run progressed").isTrue();
        String savepoint =
                job.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        for (int parallelism : new int[] {1, 3}) {
            OUT.clear();
            StreamExecutionEnvironment env2 = env(backend, parallelism, savepoint);
            DataGeneratorSource<Long> again =
                    new DataGeneratorSource<>(i -> i, FIRST + NEW, Types.LONG);
            DataStream<String> second =
                    env2.fromSource(again, WatermarkStrategy.noWatermarks(), "again")
                            .uid("source-again")
                            .map(BloomDedupRescaleITCase::event)
                            .returns(Types.STRING);
            BloomDedup.perKey(second.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), config())
                    .sinkTo(new CollectSink());
            env2.execute("rescale-to-" + parallelism);
            List<String> out = new ArrayList<>(OUT);
            Set<String> unique = new HashSet<>(out);
            assertThat(unique).hasSameSizeAs(out);
            for (String e : out) {
                assertThat(Long.parseLong(KeyedEvents.id(e)))
                        .as("id of the first run passed again at parallelism %d", parallelism)
                        .isGreaterThanOrEqualTo(FIRST);
            }
            // NEW new ids, each falsely dropped with at most 1%: 4.5 sigma bound is 40.
            assertThat(out.size()).isBetween(NEW - 40, NEW);
        }
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
        if (ENTERED.get() >= FIRST && OUT.size() >= FIRST - 100) {
            firstRunDone.countDown();
        }
    }

    /** Collects into {@link #OUT} (the mini cluster runs in this JVM). */
    static final class CollectSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context context) {
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
