package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.BloomDedupITCase;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.FailOnce;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mini-cluster test of {@link BloomCount} at parallelism 2 with event-time emission: a run that
 * fails once after a checkpoint and restarts from it emits the same final estimates as a clean run
 * (replayed events are not counted twice), and each is within three standard errors of the truth; a
 * global count writes one summed record per interval and one final record.
 */
class BloomCountITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int KEYS = 8;
    private static final long EVENTS = 60_000;

    /**
     * Events the source emits between two completed checkpoints. Gating the source on checkpoints
     * (not on the wall clock) bounds what passes before the first checkpoint completes, however
     * loaded the machine: at most these events, so at least {@code EVENTS - PER_CHECKPOINT} are
     * still to come.
     */
    private static final int PER_CHECKPOINT = 6_000;

    /**
     * Input events the failure waits for past the first completed checkpoint: fewer than the {@code
     * EVENTS - PER_CHECKPOINT} left then, so the failure is always injected. It counts input
     * events, not output records: the count's output comes in bursts when the watermark moves, and
     * whether 60 of its 104 records came after the first checkpoint depended on timing (no failure
     * injected at all on an idle machine).
     */
    private static final long AFTER = EVENTS / 4;

    /** Event i at time i ms, "i|key|user": key i % 8, user (i * 7919) % (2000 (key + 1)). */
    static String event(long i) {
        long key = i % KEYS;
        long user = (i * 7919) % (2000 * (key + 1));
        return i + "|k" + key + "|" + user;
    }

    static String field(String event, int n) {
        return event.split("\\|")[n];
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restartFromCheckpointEmitsTheSameFinalEstimatesAsACleanRun(
            Backend backend, @TempDir Path tmp) throws Exception {
        List<String> clean = run(backend, tmp.resolve("clean"), false);
        List<String> failed = run(backend, tmp.resolve("failed"), true);
        assertThat(FailOnce.FAILED.get()).as("failure injected").isTrue();

        Map<String, Set<Long>> truth = new HashMap<>();
        for (long i = 0; i < EVENTS; i++) {
            String e = event(i);
            truth.computeIfAbsent(field(e, 1), k -> new HashSet<>())
                    .add(Long.parseLong(field(e, 2)));
        }
        List<String> finals = finals(clean);
        assertThat(finals).hasSize(KEYS);
        for (String f : finals) {
            String[] p = f.split(",");
            double lower = Double.parseDouble(p[2]);
            double upper = Double.parseDouble(p[3]);
            assertThat((double) truth.get(p[0]).size()).as(f).isBetween(lower, upper);
        }
        assertThat(finals(failed)).isEqualTo(finals);
        assertThat(clean.size()).as("interval records as well as finals").isGreaterThan(KEYS * 3);
    }

    /** A user's script expects the one final record of a global count even when nothing came. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalCountOfAnEmptyInputWritesOneFinalRecordOfZero(Backend backend) throws Exception {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(backend.jobConfig());
        env.setParallelism(2);
        DataStream<String> none = env.fromData("dropped").filter(e -> false);
        List<CountEstimate> out =
                BloomCount.global(none, IdSelector.ofString(e -> e), CountConfig.builder().build())
                        .executeAndCollect(10);
        assertThat(out).hasSize(1);
        CountEstimate e = out.get(0);
        assertThat(e.key).isEqualTo("*");
        assertThat(e.isFinal).isTrue();
        assertThat(e.estimate).isZero();
        assertThat(e.lower).isZero();
        assertThat(e.upper).isZero();
        assertThat(e.valid).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalCountWritesOneSumPerIntervalAndOneFinalRecord(Backend backend, @TempDir Path tmp)
            throws Exception {
        // 20,000 events at 1 ms, 3,000 distinct users, over 1024 shards of 5 items each (the
        // repro of issue 11 in small: shards sized for a few items), interval 2 s of event time.
        long events = 20_000;
        long users = 3_000;
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(backend.jobConfig());
        env.setParallelism(2);
        DataStream<String> source =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> i + "|" + (i * 7919) % users, events, Types.STRING),
                                WatermarkStrategy.<String>forMonotonousTimestamps()
                                        .withTimestampAssigner(
                                                (e, t) -> Long.parseLong(field(e, 0))),
                                "events")
                        .setParallelism(1);
        CountConfig config =
                CountConfig.builder()
                        .filter(FilterSizing.builder().expectedItems(5000).fpp(0.01).build())
                        .timeDomain(TimeDomain.EVENT_TIME)
                        .interval(Duration.ofMillis(2000))
                        .build();
        Path dir = tmp.resolve("global");
        BloomCount.global(source, IdSelector.ofString(e -> field(e, 1)), config)
                .map(
                        e ->
                                String.format(
                                        java.util.Locale.ROOT,
                                        "%s,%.3f,%.3f,%.3f,%s,%s,%d%s",
                                        e.key,
                                        e.estimate,
                                        e.lower,
                                        e.upper,
                                        e.valid,
                                        e.saturated,
                                        e.timestamp,
                                        e.isFinal ? ",final" : ""))
                .returns(Types.STRING)
                .sinkTo(
                        FileSink.forRowFormat(
                                        new org.apache.flink.core.fs.Path(dir.toUri()),
                                        new SimpleStringEncoder<String>())
                                .build());
        env.execute("global-count-" + backend);
        List<String> records = BloomDedupITCase.readFinishedParts(dir);

        List<String> finals = finals(records);
        assertThat(finals).as("%s", records).hasSize(1);
        String[] f = finals.get(0).split(",");
        assertThat(f[0]).isEqualTo("*");
        assertThat(f[4]).as("valid").isEqualTo("true");
        assertThat(f[5]).as("saturated").isEqualTo("false");
        // three standard errors of the summed estimate (1024 independent shard estimates)
        assertThat((double) users).isBetween(Double.parseDouble(f[2]), Double.parseDouble(f[3]));
        Map<String, Integer> perInterval = new HashMap<>();
        for (String r : records) {
            if (!r.endsWith(",final")) {
                perInterval.merge(r.split(",")[6], 1, Integer::sum);
            }
        }
        // How many boundaries the watermarks reveal depends on the wall clock; at least the first
        // (2000) is always emitted, by every shard, even if the watermark jumps to its maximum.
        assertThat(perInterval).as("intervals %s", records).containsKey("2000");
        assertThat(perInterval.values()).as("records per interval").containsOnly(1);
    }

    private static List<String> finals(List<String> records) {
        List<String> f = new ArrayList<>();
        for (String r : records) {
            if (r.endsWith(",final")) {
                f.add(r);
            }
        }
        Collections.sort(f);
        return f;
    }

    private static List<String> run(Backend backend, Path dir, boolean fail) throws Exception {
        FailOnce.reset(fail);
        Configuration conf = backend.jobConfig();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(100);
        DataStream<String> events =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        BloomCountITCase::event,
                                        EVENTS,
                                        RateLimiterStrategy.perCheckpoint(PER_CHECKPOINT),
                                        Types.STRING),
                                WatermarkStrategy.<String>forMonotonousTimestamps()
                                        .withTimestampAssigner(
                                                (e, t) -> Long.parseLong(field(e, 0))),
                                "events")
                        .setParallelism(1)
                        .map(new FailOnce<String>(AFTER))
                        .setParallelism(1)
                        .returns(Types.STRING);
        CountConfig config =
                CountConfig.builder()
                        .filter(FilterSizing.builder().expectedItems(1000).fpp(0.01).build())
                        .timeDomain(TimeDomain.EVENT_TIME)
                        .interval(Duration.ofMillis(5000))
                        .build();
        BloomCount.perKey(
                        events.keyBy(e -> field(e, 1), Types.STRING),
                        IdSelector.ofString(e -> field(e, 2)),
                        config)
                .map(
                        e ->
                                String.format(
                                        java.util.Locale.ROOT,
                                        "%s,%.3f,%.3f,%.3f,%d,%d%s",
                                        e.key,
                                        e.estimate,
                                        e.lower,
                                        e.upper,
                                        e.bitsSet,
                                        e.stages,
                                        e.isFinal ? ",final" : ",t" + e.timestamp))
                .returns(Types.STRING)
                .sinkTo(
                        FileSink.forRowFormat(
                                        new org.apache.flink.core.fs.Path(dir.toUri()),
                                        new SimpleStringEncoder<String>())
                                .build());
        env.execute("count-" + backend + (fail ? "-failure" : "-clean"));
        return BloomDedupITCase.readFinishedParts(dir);
    }
}
