package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.io.DataInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.BatchExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link DedupBootstrap}: a savepoint written from {@value #IDS} random ids (fixed seed), then a
 * real dedup job restored from it, at another parallelism (a rescale) and maybe on another backend,
 * over the same ids and as many new ones, shuffled together. No bootstrapped id may pass (the
 * filters hold them, as the job's own state would); in exact mode every new id passes; else at most
 * {@value #MAX_DROPPED_PERCENT}% of the new ids are dropped.
 *
 * <p>The bound: the config has fpp 0.01 for expectedItems equal to all ids (bootstrapped and new:
 * per key {@value #PER_KEY_ITEMS}, global {@value #IDS} x 2), so each new id is dropped with
 * probability at most 0.01 (the rate at full capacity; less before). Over {@value #IDS} new ids the
 * drops are then at most binomial(20,000, 0.01): mean 200, standard deviation 14; 3% is 600, 28
 * standard deviations above it. A failure means the filters do not hold what they were sized for.
 */
class DedupBootstrapITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    static final int IDS = 20_000;
    static final int KEYS = 8;
    static final long PER_KEY_ITEMS = 2L * IDS / KEYS;
    static final int MAX_DROPPED_PERCENT = 3;

    /** Records "kK:ID": a key of 8 and a random id; the id alone is unique. */
    static final List<String> BOOTSTRAPPED = records(new Random(4301), IDS);

    static final List<String> NEW = records(new Random(4302), IDS);

    static final KeySelector<String, String> KEY = s -> s.substring(0, s.indexOf(':'));
    static final IdSelector<String> ID = IdSelector.ofString(s -> s.substring(s.indexOf(':') + 1));

    enum Mode {
        PER_KEY,
        GLOBAL
    }

    static List<String> records(Random random, int count) {
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add("k" + random.nextInt(KEYS) + ":" + Long.toHexString(random.nextLong()));
        }
        return out;
    }

    static DedupConfig config(Mode mode, boolean exact, int shards, long seed) {
        return DedupConfig.builder()
                .expectedItems(mode == Mode.PER_KEY ? PER_KEY_ITEMS : 2L * IDS)
                .fpp(0.01)
                .shards(shards)
                .seed(seed)
                .exact(exact)
                .build();
    }

    static DedupConfig config(Mode mode, boolean exact) {
        return config(mode, exact, 64, 7);
    }

    @ParameterizedTest(name = "{0} exact={1}: bootstrap on {2} at {3}, run on {4} at {5}")
    @CsvSource({
        "PER_KEY, false, HEAP, 2, ROCKSDB, 3",
        "PER_KEY, true, ROCKSDB, 3, HEAP, 2",
        "GLOBAL, false, HEAP, 3, HEAP, 2",
        "GLOBAL, true, HEAP, 2, ROCKSDB, 3",
    })
    void aRestoredJobPassesNoBootstrappedIdAndTheNewOnes(
            Mode mode,
            boolean exact,
            Backend bootstrapBackend,
            int bootstrapParallelism,
            Backend runBackend,
            int runParallelism,
            @TempDir Path tmp)
            throws Exception {
        DedupConfig config = config(mode, exact);
        String savepoint = bootstrap(tmp, mode, config, bootstrapBackend, bootstrapParallelism);

        List<String> input = new ArrayList<>(BOOTSTRAPPED);
        input.addAll(NEW);
        Collections.shuffle(input, new Random(4303));
        List<String> passed = run(savepoint, mode, config, runBackend, runParallelism, input);

        Set<String> bootstrapped = new HashSet<>(BOOTSTRAPPED);
        assertThat(passed).as("bootstrapped ids that passed").noneMatch(bootstrapped::contains);
        assertThat(passed).doesNotHaveDuplicates();
        long dropped = NEW.size() - passed.size();
        System.out.printf(
                "bootstrap %s exact=%s: %d of %d new ids dropped%n",
                mode, exact, dropped, NEW.size());
        if (exact) {
            assertThat(passed).as("exact mode: every new id").hasSameSizeAs(NEW);
        } else {
            assertThat(dropped * 100)
                    .as("new ids dropped, of %d", NEW.size())
                    .isLessThanOrEqualTo((long) MAX_DROPPED_PERCENT * NEW.size());
        }
        assertThat(new HashSet<>(NEW)).containsAll(passed);
    }

    /**
     * The restore of bootstrapped state is checked as any restore: a job with another shard count
     * or seed is refused, naming the field.
     */
    @Test
    void aJobWithAnotherShardCountOrSeedRefusesTheBootstrappedState(@TempDir Path tmp)
            throws Exception {
        String savepoint =
                bootstrap(tmp, Mode.GLOBAL, config(Mode.GLOBAL, false, 16, 7), Backend.HEAP, 2);
        List<String> input = NEW.subList(0, 100);
        assertThatThrownBy(
                        () ->
                                run(
                                        savepoint,
                                        Mode.GLOBAL,
                                        config(Mode.GLOBAL, false, 32, 7),
                                        Backend.HEAP,
                                        2,
                                        input))
                .satisfies(
                        e ->
                                assertThat(ExceptionUtils.stringifyException(e))
                                        .contains(
                                                "field shards was 16 in the savepoint and is 32 in"
                                                        + " the job's config"));
        assertThatThrownBy(
                        () ->
                                run(
                                        savepoint,
                                        Mode.GLOBAL,
                                        config(Mode.GLOBAL, false, 16, 8),
                                        Backend.HEAP,
                                        2,
                                        input))
                .satisfies(
                        e ->
                                assertThat(ExceptionUtils.stringifyException(e))
                                        .contains(
                                                "field seed was 7 (0x7) in the savepoint and is 8 (0x8) in"
                                                        + " the job's config"));
    }

    @Test
    void refusesEventTimeRetention() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<String> ids = env.fromData(Types.STRING, "a");
        DedupConfig config =
                DedupConfig.builder()
                        .retention(
                                java.time.Duration.ofHours(1),
                                io.bloomstream.flink.TimeDomain.EVENT_TIME)
                        .build();
        assertThatThrownBy(() -> DedupBootstrap.global(ids, ID, config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no event-time retention");
    }

    /**
     * A bootstrap large enough for a batch job's adaptive scheduler to divide the key groups by
     * data volume (2*10^6 ids, about 30 MB, at parallelism 2, the scheduler left at its defaults):
     * every subtask's state is in the savepoint, and the filters took at least 99% of the ids (the
     * rest are false positives of the bootstrap's own filters, at fpp 0.01 and half the expected
     * items: under 0.1% on average). Before {@link DedupBootstrap} turned the adaptive choice off,
     * one subtask was handed key groups outside its range, failed, and Flink's bootstrap runner
     * swallowed it: half the ids were missing.
     */
    @Test
    void aLargeBootstrapKeepsTheStateOfEverySubtask(@TempDir Path tmp) throws Exception {
        long ids = 2_000_000;
        Configuration conf = Backend.HEAP.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        conf.set(PipelineOptions.GENERIC_TYPES, true);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<String> seen =
                env.fromSequence(0, ids - 1).map(i -> "id-" + i).returns(Types.STRING);
        DedupConfig config = DedupConfig.builder().expectedItems(2 * ids).fpp(0.01).build();
        String path = tmp.resolve("large").toUri().toString();
        SavepointWriter.newSavepoint(env, Backend.HEAP.create(), 128)
                .withOperator(
                        OperatorIdentifier.forUid(BloomDedup.DEFAULT_UID),
                        DedupBootstrap.global(seen, IdSelector.ofString(s -> s), config))
                .write(path);
        env.execute("large bootstrap");
        assertThat(subtaskStates(tmp.resolve("large"))).isEqualTo(2);
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setRuntimeMode(RuntimeExecutionMode.BATCH);
        long added =
                io.bloomstream.flink.inspect.BloomInspect.dedup(
                                reader, path, Backend.HEAP.create(), BloomDedup.DEFAULT_UID, null)
                        .itemsAdded();
        assertThat(added).isBetween(ids * 99 / 100, ids);
    }

    /** Writes the bootstrap savepoint of {@link #BOOTSTRAPPED}; returns its path. */
    static String bootstrap(
            Path tmp, Mode mode, DedupConfig config, Backend backend, int parallelism)
            throws Exception {
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        // the State Processor API passes its TaggedOperatorSubtaskState through Kryo
        conf.set(PipelineOptions.GENERIC_TYPES, true);
        // the parallelism asked for, not one the batch scheduler infers: the run then rescales
        conf.set(BatchExecutionOptions.ADAPTIVE_AUTO_PARALLELISM_ENABLED, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<String> ids = env.fromData(BOOTSTRAPPED, Types.STRING);
        String path = tmp.resolve("bootstrap").toUri().toString();
        SavepointWriter.newSavepoint(env, backend.create(), 128)
                .withOperator(
                        OperatorIdentifier.forUid(BloomDedup.DEFAULT_UID),
                        mode == Mode.PER_KEY
                                ? DedupBootstrap.perKey(ids, KEY, Types.STRING, ID, config)
                                : DedupBootstrap.global(ids, ID, config))
                .write(path);
        env.execute("bootstrap-" + mode);
        assertThat(subtaskStates(tmp.resolve("bootstrap")))
                .as("the savepoint holds the state of each bootstrap subtask")
                .isEqualTo(parallelism);
        return path;
    }

    /** The subtask states of the dedup operator in the savepoint at {@code dir}. */
    static int subtaskStates(Path dir) throws Exception {
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(dir.resolve("_metadata")))) {
            CheckpointMetadata metadata =
                    Checkpoints.loadCheckpointMetadata(
                            in, DedupBootstrapITCase.class.getClassLoader(), dir.toString());
            assertThat(metadata.getOperatorStates()).hasSize(1);
            return metadata.getOperatorStates().iterator().next().getSubtaskStates().size();
        }
    }

    /** Runs the dedup job restored from {@code savepoint} over {@code input}; what passed. */
    static List<String> run(
            String savepoint,
            Mode mode,
            DedupConfig config,
            Backend backend,
            int parallelism,
            List<String> input)
            throws Exception {
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<String> events = env.fromData(input, Types.STRING).setParallelism(1);
        DataStream<String> firsts =
                mode == Mode.PER_KEY
                        ? BloomDedup.perKey(events.keyBy(KEY, Types.STRING), ID, config)
                        : BloomDedup.global(events, ID, config);
        List<String> passed = new ArrayList<>();
        try (CloseableIterator<String> it = firsts.executeAndCollect("run-" + mode)) {
            it.forEachRemaining(passed::add);
        }
        return passed;
    }
}
