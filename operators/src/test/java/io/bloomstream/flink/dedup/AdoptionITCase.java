package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.inspect.BloomInspect;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.JobWaits;
import io.bloomstream.testing.MiniClusters;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
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
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * docs/adopting.md, end to end: an exact dedup job (a {@code ValueState<Boolean>} keyed by the id,
 * what a Flink user writes first) is stopped with a savepoint; its keys are read from that
 * savepoint and bootstrapped into a {@link BloomDedup}'s state in a copy of the savepoint, without
 * the exact operator; the bloomstream job starts from the copy at another parallelism and another
 * state backend's runtime, over a stream of old and new ids.
 *
 * <p>The promise checked: no id the exact job had seen passes (not one: no duplicate burst at the
 * cutover), no id passes twice, and of the new ids at most {@value #MAX_NEW_DROPPED_PERCENT}% are
 * dropped (false positives of a filter sized for every id at fpp 0.01: the mean is under 1% and a
 * binomial standard deviation over about 9,000 new ids about 0.1%, so the bound is far from the
 * mean; fixed seeds).
 */
class AdoptionITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    static final int MAX_NEW_DROPPED_PERCENT = 3;
    static final int FIRST_EVENTS = 16_000;
    static final int SECOND_EVENTS = 16_000;

    /** Yesterday: 16,000 draws from 12,000 ids; today: 16,000 draws from 24,000 (old and new). */
    static final String[] FIRST = events(new Random(4311), FIRST_EVENTS, 12_000);

    static final String[] SECOND = events(new Random(4312), SECOND_EVENTS, 24_000);

    private static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();

    /** Counted down when {@link #OUT} holds {@link #judgedAt} ids (the exact job's run). */
    private static volatile CountDownLatch judged = new CountDownLatch(1);

    private static volatile int judgedAt = Integer.MAX_VALUE;

    static String[] events(Random random, int count, int range) {
        String[] events = new String[count];
        for (int i = 0; i < count; i++) {
            int id = random.nextInt(range);
            events[i] = "k" + (id % 5) + ":id-" + id;
        }
        return events;
    }

    /** The key of an event in the per-key variant: what precedes the colon. */
    static String keyOf(String event) {
        return event.substring(0, event.indexOf(':'));
    }

    static DedupConfig config() {
        return DedupConfig.builder().expectedItems(30_000).fpp(0.01).build();
    }

    @ParameterizedTest(name = "{0}, exact job on {1}, bloomstream on {2}")
    @CsvSource({"global, HEAP, ROCKSDB", "per key, ROCKSDB, HEAP"})
    void noIdTheExactJobSawPassesAfterTheSwitch(
            String mode, Backend before, Backend after, @TempDir Path tmp) throws Exception {
        boolean perKey = mode.equals("per key");
        Set<String> seen = distinct(FIRST);

        // 1. The exact job, parallelism 2, stopped with a savepoint once it has judged FIRST.
        OUT.clear();
        String exactSavepoint = runExactJob(before, tmp.resolve("exact").toUri().toString());
        assertThat(new HashSet<>(OUT)).isEqualTo(seen);

        // 2. Its keys into bloomstream's state, in a copy of its savepoint.
        String adopted = tmp.resolve("adopted").toUri().toString();
        adopt(exactSavepoint, adopted, perKey);
        assertThat(BloomInspect.holds(adopted, "exact-dedup")).isFalse();
        assertThat(
                        BloomInspect.dedup(
                                        batch(),
                                        adopted,
                                        new HashMapStateBackend(),
                                        BloomDedup.DEFAULT_UID,
                                        perKey ? Types.STRING : null)
                                .itemsAdded())
                .as("the ids the exact job had seen, in the filters")
                .isEqualTo(seen.size());

        // 3. The bloomstream job from the copy, parallelism 3, over today's events.
        OUT.clear();
        Configuration conf = after.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 3);
        conf.set(StateRecoveryOptions.SAVEPOINT_PATH, adopted);
        // the copy keeps the exact job's source state (its offsets, for a Kafka source); today's
        // source here is another one, so that state is not claimed (flink run -n)
        conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        DataStream<String> today =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> SECOND[i.intValue()], SECOND_EVENTS, Types.STRING),
                                WatermarkStrategy.noWatermarks(),
                                "today")
                        .uid("today")
                        .setParallelism(1);
        IdSelector<String> id = IdSelector.ofString(s -> s);
        (perKey
                        ? BloomDedup.perKey(
                                today.keyBy(AdoptionITCase::keyOf, Types.STRING), id, config())
                        : BloomDedup.global(today, id, config()))
                .sinkTo(new CollectSink());
        env.execute("bloomstream");

        List<String> passed = new ArrayList<>(OUT);
        assertThat(passed).doesNotHaveDuplicates();
        assertThat(passed).as("ids the exact job had seen that passed").noneMatch(seen::contains);
        Set<String> fresh = distinct(SECOND);
        fresh.removeAll(seen);
        assertThat(fresh).containsAll(passed);
        long dropped = fresh.size() - passed.size();
        System.out.printf(
                "adoption (%s, %s then %s): %d ids carried, none passed; %d new ids, %d dropped as"
                        + " false positives%n",
                mode, before, after, seen.size(), fresh.size(), dropped);
        assertThat(dropped * 100)
                .as("new ids dropped, of %d", fresh.size())
                .isLessThanOrEqualTo((long) MAX_NEW_DROPPED_PERCENT * fresh.size());
    }

    // docs/adopting.md: begin
    /** The exact job's ids: the keys of its {@code ValueState<Boolean>} "seen". */
    static final class SeenIds extends KeyedStateReaderFunction<String, String> {
        private transient ValueState<Boolean> seen;

        @Override
        public void open(OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void readKey(String id, Context context, Collector<String> out) throws Exception {
            if (Boolean.TRUE.equals(seen.value())) {
                out.collect(id);
            }
        }
    }

    /** A copy of the exact job's savepoint with bloomstream's state in place of its dedup's. */
    static void adopt(String exactSavepoint, String adopted, boolean perKey) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        DataStream<String> ids =
                SavepointReader.read(env, exactSavepoint, new HashMapStateBackend())
                        .readKeyedState(
                                OperatorIdentifier.forUid("exact-dedup"),
                                new SeenIds(),
                                Types.STRING,
                                Types.STRING);
        IdSelector<String> id = IdSelector.ofString(s -> s);
        StateBootstrapTransformation<String> filters =
                perKey
                        ? DedupBootstrap.perKey(
                                ids, AdoptionITCase::keyOf, Types.STRING, id, config())
                        : DedupBootstrap.global(ids, id, config());
        SavepointWriter.fromExistingSavepoint(env, exactSavepoint, new HashMapStateBackend())
                .removeOperator(OperatorIdentifier.forUid("exact-dedup"))
                .withOperator(OperatorIdentifier.forUid(BloomDedup.DEFAULT_UID), filters)
                .write(adopted);
        env.execute("adopt");
    }

    // docs/adopting.md: end

    /** The exact dedup a user replaces: first occurrences by a {@code ValueState<Boolean>}. */
    static final class ExactDedup extends KeyedProcessFunction<String, String, String> {
        private transient ValueState<Boolean> seen;

        @Override
        public void open(OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void processElement(String event, Context ctx, Collector<String> out)
                throws Exception {
            if (seen.value() == null) {
                seen.update(true);
                out.collect(event);
            }
        }
    }

    private static String runExactJob(Backend backend, String savepoints) throws Exception {
        Configuration conf = backend.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.fromSource(
                        new DataGeneratorSource<>(
                                i -> i < FIRST_EVENTS ? FIRST[i.intValue()] : "",
                                Long.MAX_VALUE,
                                Types.STRING),
                        WatermarkStrategy.noWatermarks(),
                        "yesterday")
                .uid("source")
                .setParallelism(1)
                .filter(s -> !s.isEmpty())
                .keyBy(s -> s, Types.STRING)
                .process(new ExactDedup())
                .uid("exact-dedup")
                .sinkTo(new CollectSink());
        judged = new CountDownLatch(1);
        judgedAt = distinct(FIRST).size();
        JobClient job = env.executeAsync("exact");
        JobWaits.until(job, judged, "the exact job judged yesterday");
        return job.stopWithSavepoint(false, savepoints, SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
    }

    private static StreamExecutionEnvironment batch() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    static Set<String> distinct(String[] events) {
        return new LinkedHashSet<>(List.of(events));
    }

    /** docs/adopting.md shows {@link #adopt} and {@link SeenIds} as they are here. */
    @Test
    void thePageShowsThisCode() throws Exception {
        String source =
                Files.readString(
                        Path.of("src/test/java/io/bloomstream/flink/dedup/AdoptionITCase.java"),
                        StandardCharsets.UTF_8);
        String code =
                source.substring(
                        source.indexOf("// docs/adopting.md: begin") + 27,
                        source.indexOf("    // docs/adopting.md: end"));
        String page = Files.readString(Path.of("../docs/adopting.md"), StandardCharsets.UTF_8);
        assertThat(page).contains(code.stripTrailing().stripIndent().strip());
    }

    /** Collects into {@link #OUT} (the mini cluster runs in this JVM). */
    static final class CollectSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context context) {
                    OUT.add(element);
                    if (OUT.size() >= judgedAt) {
                        judged.countDown();
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
