package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A restore the dedup refuses (here: a global dedup's savepoint with 8 shards restored with 16)
 * fails the job for good under a restart strategy that would otherwise retry for ever, with the
 * refusal's message in the job's failure.
 */
class RefusedRestoreITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static volatile CountDownLatch written = new CountDownLatch(1);

    /** Counted down by each sink subtask's first record: every subtask of the job is running. */
    private static volatile CountDownLatch writing = new CountDownLatch(0);

    private static DedupConfig config(int shards) {
        return DedupConfig.builder().expectedItems(10_000).fpp(0.01).shards(shards).build();
    }

    private static StreamExecutionEnvironment env(String restore) {
        return env(Backend.HEAP, restore);
    }

    private static StreamExecutionEnvironment env(Backend backend, String restore) {
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore);
            // Restarts without end, an hour apart: only a failure that suppresses them ends the
            // job within the test's wait.
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            conf.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS,
                    Integer.MAX_VALUE);
            conf.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofHours(1));
        }
        return StreamExecutionEnvironment.getExecutionEnvironment(conf);
    }

    private static DataStream<String> ids(StreamExecutionEnvironment env, long count) {
        GeneratorFunction<Long, String> id = i -> "id-" + i;
        return env.fromSource(
                        new DataGeneratorSource<>(
                                id, count, RateLimiterStrategy.perSecond(2_000), Types.STRING),
                        WatermarkStrategy.noWatermarks(),
                        "ids")
                .uid("ids");
    }

    @Test
    void aRefusedRestoreFailsTheJobWithoutRestarts(@TempDir Path tmp) throws Exception {
        written = new CountDownLatch(200);
        StreamExecutionEnvironment env1 = env(null);
        BloomDedup.global(ids(env1, Long.MAX_VALUE), IdSelector.ofString(s -> s), config(8))
                .sinkTo(new CountingSink());
        JobClient first = env1.executeAsync("refused-restore-first");
        assertThat(written.await(2, TimeUnit.MINUTES)).as("first run wrote").isTrue();
        String savepoint =
                first.stopWithSavepoint(
                                false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        StreamExecutionEnvironment env2 = env(savepoint);
        BloomDedup.global(ids(env2, 1_000), IdSelector.ofString(s -> s), config(16))
                .sinkTo(new CountingSink());
        JobClient second = env2.executeAsync("refused-restore-second");
        CompletableFuture<JobExecutionResult> result = second.getJobExecutionResult();
        try {
            Throwable failure = null;
            try {
                result.get(90, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                failure = e;
            }
            assertThat(failure).as("the restore is refused").isNotNull();
            assertThat(ExceptionUtils.findThrowable(failure, SuppressRestartsException.class))
                    .isPresent();
            assertThat(ExceptionUtils.stringifyException(failure))
                    .contains("field shards was 8 in the savepoint and is 16 in the job's config");
        } catch (TimeoutException e) {
            throw new AssertionError("the refused restore is still restarting after 90 s", e);
        } finally {
            if (!result.isDone()) {
                second.cancel().get(1, TimeUnit.MINUTES);
            }
        }
    }

    /**
     * A per-key savepoint with String keys restored into global mode under the same uid: Flink's
     * keyed backend refused it with its own StateMigrationException (the key serializer differs),
     * and the restart strategy restarted the job into the same refusal for ever. Now the operator
     * reads the savepoint's key serializer before the backend restores and fails the job for good,
     * naming both modes: on the heap from a canonical savepoint (a full snapshot) and on RocksDB
     * from a native one (an incremental snapshot, whose key serializer is in another handle).
     */
    @ParameterizedTest
    @CsvSource({"HEAP, CANONICAL", "ROCKSDB, NATIVE"})
    void aPerKeySavepointRestoredIntoGlobalFailsForGood(
            Backend backend, SavepointFormatType format, @TempDir Path tmp) throws Exception {
        written = new CountDownLatch(200);
        writing = new CountDownLatch(2); // the parallelism: a savepoint needs every task running
        StreamExecutionEnvironment env1 = env(backend, null);
        BloomDedup.perKey(
                        ids(env1, Long.MAX_VALUE)
                                .keyBy(s -> "k" + (s.hashCode() & 3), Types.STRING),
                        IdSelector.ofString(s -> s),
                        config(8)) // per key: the shard count is not used
                .sinkTo(new CountingSink());
        JobClient first = env1.executeAsync("per-key-into-global-first");
        String savepoint;
        try {
            assertThat(written.await(2, TimeUnit.MINUTES)).as("first run wrote").isTrue();
            assertThat(writing.await(2, TimeUnit.MINUTES)).as("every subtask runs").isTrue();
            savepoint =
                    first.stopWithSavepoint(false, tmp.toUri().toString(), format)
                            .get(2, TimeUnit.MINUTES);
        } catch (Exception | AssertionError e) {
            first.cancel().get(1, TimeUnit.MINUTES);
            throw e;
        }

        StreamExecutionEnvironment env2 = env(backend, savepoint);
        BloomDedup.global(ids(env2, 1_000), IdSelector.ofString(s -> s), config(8))
                .sinkTo(new CountingSink());
        JobClient second = env2.executeAsync("per-key-into-global-second");
        CompletableFuture<JobExecutionResult> result = second.getJobExecutionResult();
        try {
            Throwable failure = null;
            try {
                result.get(90, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                failure = e;
            }
            assertThat(failure).as("the restore is refused").isNotNull();
            assertThat(ExceptionUtils.findThrowable(failure, SuppressRestartsException.class))
                    .isPresent();
            assertThat(ExceptionUtils.stringifyException(failure))
                    .contains(
                            "its keys were written by StringSerializer and the job's keys are read"
                                    + " by IntSerializer")
                    .contains("a savepoint of BloomDedup.perKey restored into BloomDedup.global");
        } catch (TimeoutException e) {
            throw new AssertionError("the refused restore is still restarting after 90 s", e);
        } finally {
            if (!result.isDone()) {
                second.cancel().get(1, TimeUnit.MINUTES);
            }
        }
    }

    /** Counts the records written (the mini cluster runs in this JVM). */
    static final class CountingSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                private boolean first = true;

                @Override
                public void write(String element, Context context) {
                    written.countDown();
                    if (first) {
                        first = false;
                        writing.countDown();
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
