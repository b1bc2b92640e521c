package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.count.BloomOverlap;
import io.bloomstream.flink.count.BloomOverlapTest;
import io.bloomstream.flink.count.CountConfig;
import io.bloomstream.flink.count.CountFunction;
import io.bloomstream.flink.count.CountFunctionTest;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.BloomDedupITCase;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.flink.screen.BloomScreen;
import io.bloomstream.flink.screen.FilterUpdate;
import io.bloomstream.flink.screen.ScreenConfig;
import io.bloomstream.flink.screen.ScreenFunctionTest;
import io.bloomstream.flink.screen.ScreenMetrics;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.FailOnce;
import io.bloomstream.testing.KeyedEvents;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for the metrics of dedup, screen, count and overlap on a mini cluster (two task managers,
 * parallelism 2), read through Flink's {@link InMemoryReporter}: each is registered in its
 * operator's group under the documented name and moves, in the first attempt and in the attempt
 * restored from a checkpoint after an injected failure; {@code bloomAllocatedPages} is never seen
 * below zero and is zero once the end of input has freed all state.
 */
class MetricsITCase {

    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    /** Events: four seconds at the source's rate, so checkpoints complete before the failure. */
    private static final long EVENTS = 60_000;

    private static final String FIXED_DEDUP = "bloom-dedup-fixed";

    /**
     * Event i at event time i ms: with j = i / 2, key k(j mod 8) and id j mod 5000, so events come
     * in pairs (the second a duplicate); every 1000th has no id, every 1000th (offset 500) is 20 s
     * behind, and every 1000th (offset 250) is of key "far", a year ahead and in a bucket of its
     * own, which the watermark ignores.
     */
    static String event(long i) {
        long j = i / 2;
        if (i % 1000 == 999) {
            return "k" + (j % 8) + ",";
        }
        if (i % 1000 == 250) {
            return "far," + i;
        }
        return "k" + (j % 8) + "," + (j % 5000);
    }

    static long timestamp(long i) {
        if (i % 1000 == 250) {
            return 365L * 24 * 3600 * 1000 + 1000 * i;
        }
        return i % 1000 == 500 ? Math.max(0, i - 20_000) : i;
    }

    /** Watermarks at the largest timestamp of keys other than "far", emitted periodically. */
    static final class IgnoringFar implements WatermarkGenerator<String> {
        private long max = Long.MIN_VALUE;

        @Override
        public void onEvent(String event, long timestamp, WatermarkOutput output) {
            if (!event.startsWith("far,")) {
                max = Math.max(max, timestamp);
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            if (max != Long.MIN_VALUE) {
                output.emitWatermark(new Watermark(max - 1));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void everyMetricMovesInTheFirstAndTheRestoredAttempt(Backend backend, @TempDir Path tmp)
            throws Exception {
        String filter =
                ScreenFunctionTest.writeFilter(
                        tmp.resolve("list.bloom"),
                        Normalization.EMAIL,
                        Hasher.defaultHasher(),
                        "k3@bloom.example");
        StreamExecutionEnvironment env = BloomDedupITCase.env(backend);
        env.enableCheckpointing(100);
        FailOnce.reset(true);
        DataGeneratorSource<String> source =
                new DataGeneratorSource<>(
                        i -> event(i) + "," + timestamp(i),
                        EVENTS,
                        RateLimiterStrategy.perSecond(15_000),
                        Types.STRING);
        WatermarkStrategy<String> watermarks =
                WatermarkStrategy.<String>forGenerator(ctx -> new IgnoringFar())
                        .withTimestampAssigner(
                                (e, ts) -> Long.parseLong(e.substring(e.lastIndexOf(',') + 1)));
        DataStream<String> events =
                env.fromSource(source, watermarks, "events")
                        .setParallelism(1)
                        .map(e -> e.substring(0, e.lastIndexOf(',')))
                        .returns(Types.STRING);

        DedupConfig scalable =
                DedupConfig.builder()
                        .expectedItems(20)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(1), TimeDomain.EVENT_TIME)
                        .build();
        // The failure comes 5,000 passed ids (10,000 events, 0.7 s) after the first checkpoint:
        // the other branches, fed through network buffers that flush every 100 ms, have by then
        // moved their metrics too (after 1,000 the fixed dedup was once still below its capacity).
        BloomDedup.perKey(events.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), scalable)
                .map(new FailOnce<String>(5_000))
                .returns(Types.STRING)
                .sinkTo(new DiscardingSink<>());
        DedupConfig fixed =
                DedupConfig.builder()
                        .expectedItems(20)
                        .fpp(0.01)
                        .fixed()
                        .retention(Duration.ofSeconds(1), TimeDomain.EVENT_TIME)
                        .build();
        BloomDedup.withUidPrefix(FIXED_DEDUP)
                .perKey(events.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), fixed)
                .sinkTo(new DiscardingSink<>());

        DataStream<String> near = events.filter(e -> !e.startsWith("far,"));
        DataStream<FilterUpdate> commands =
                env.fromData(
                        FilterUpdate.add("new@bloom.example"),
                        FilterUpdate.add("nodomain@"), // unusable: a command error
                        FilterUpdate.load("nosuchscheme:///list-v2.bloom", 2)); // a load error
        ScreenConfig<String> screen =
                ScreenConfig.<String>builder()
                        .filterPath(filter)
                        .normalization(Normalization.EMAIL)
                        .field("from", e -> KeyedEvents.key(e) + "@bloom.example")
                        .field("id", e -> KeyedEvents.id(e).isEmpty() ? null : "x@y.example")
                        .build();
        BloomScreen.screen(near, commands, screen).sinkTo(new DiscardingSink<>());
        CountConfig count = CountFunctionTest.eventTime(100).window(Duration.ofSeconds(1)).build();
        BloomCount.perKey(near.keyBy(KeyedEvents::key), KeyedEvents.idSelector(), count)
                .sinkTo(new DiscardingSink<>());
        BloomOverlap.between(
                        near.keyBy(KeyedEvents::key),
                        KeyedEvents.idSelector(),
                        near.filter(e -> e.hashCode() % 2 == 0).keyBy(KeyedEvents::key),
                        KeyedEvents.idSelector(),
                        BloomOverlapTest.config(
                                FilterSizing.builder()
                                        .expectedItems(5000)
                                        .fpp(0.01)
                                        .fixed()
                                        .build()))
                .sinkTo(new DiscardingSink<>());

        JobClient client = env.executeAsync("metrics-" + backend);
        JobID job = client.getJobID();
        AtomicLong minPages = new AtomicLong(Long.MAX_VALUE);
        AtomicLong maxPages = new AtomicLong(Long.MIN_VALUE);
        var result = client.getJobExecutionResult();
        while (!result.isDone()) {
            for (Map<String, Metric> m : groups(job, BloomDedup.DEFAULT_UID)) {
                if (!m.containsKey(DedupMetrics.ALLOCATED_PAGES)) {
                    continue; // the task is starting: the function is not open yet
                }
                long pages = gauge(m, DedupMetrics.ALLOCATED_PAGES);
                minPages.accumulateAndGet(pages, Math::min);
                maxPages.accumulateAndGet(pages, Math::max);
            }
            try {
                result.get(20, TimeUnit.MILLISECONDS); // sample again unless the job ended
            } catch (TimeoutException e) {
                // still running
            }
        }
        result.get();
        assertThat(FailOnce.FAILED.get()).as("the failure was injected").isTrue();
        assertThat(minPages.get()).as("allocated pages, sampled while running").isNotNegative();
        assertThat(maxPages.get()).isPositive();

        for (int attempt = 0; attempt <= 1; attempt++) {
            String as = "attempt " + attempt;
            List<Map<String, Metric>> dedup = groups(job, BloomDedup.DEFAULT_UID, attempt);
            assertThat(dedup).as(as).hasSize(2);
            assertThat(sum(dedup, DedupMetrics.RECORDS_IN)).as(as).isPositive();
            assertThat(sum(dedup, DedupMetrics.PASSED)).as(as).isPositive();
            assertThat(sum(dedup, DedupMetrics.DUPLICATES)).as(as).isPositive();
            assertThat(sum(dedup, DedupMetrics.REJECTED)).as(as).isPositive();
            for (Map<String, Metric> m : dedup) {
                assertThat(gauge(m, DedupMetrics.ALLOCATED_PAGES)).as(as).isNotNegative();
                metric(m, DedupMetrics.WORST_FILL_RATIO);
                metric(m, DedupMetrics.ESTIMATED_FPP);
                metric(m, DedupMetrics.CASCADE_STAGES);
            }
            List<Map<String, Metric>> fixedDedup = groups(job, FIXED_DEDUP, attempt);
            assertThat(sum(fixedDedup, DedupMetrics.OVER_CAPACITY)).as(as).isPositive();
            List<Map<String, Metric>> screens = groups(job, BloomScreen.DEFAULT_UID, attempt);
            assertThat(sum(screens, ScreenMetrics.SCREENED)).as(as).isPositive();
            assertThat(sum(screens, ScreenMetrics.FLAGGED)).as(as).isPositive();
            assertThat(sum(screens, ScreenMetrics.REJECTED)).as(as).isPositive();
            for (Map<String, Metric> m : screens) {
                assertThat(gauge(m, ScreenMetrics.FILTER_VERSION)).as(as).isEqualTo(1);
                assertThat(gauge(m, ScreenMetrics.FILTER_BYTES)).as(as).isPositive();
                assertThat(((Number) metric(m, ScreenMetrics.EXPECTED_FPP)).doubleValue())
                        .isPositive();
            }
            List<Map<String, Metric>> counts = groups(job, BloomCount.DEFAULT_UID, attempt);
            assertThat(sum(counts, CountFunction.REJECTED)).as(as).isPositive();
            List<Map<String, Metric>> overlaps = groups(job, BloomOverlap.DEFAULT_UID, attempt);
            assertThat(sum(overlaps, BloomOverlap.REJECTED)).as(as).isPositive();
            assertThat(sum(overlaps, BloomOverlap.SHAPE_MISMATCH)).as(as).isZero();
        }
        // Sampled after the end of input: every generation freed, in the restored attempt too.
        List<Map<String, Metric>> last = groups(job, BloomDedup.DEFAULT_UID, 1);
        for (Map<String, Metric> m : last) {
            assertThat(gauge(m, DedupMetrics.ALLOCATED_PAGES)).isZero();
        }
        List<Map<String, Metric>> dedup = groups(job, BloomDedup.DEFAULT_UID);
        assertThat(sum(dedup, DedupMetrics.LATE)).isPositive();
        assertThat(sum(dedup, DedupMetrics.WIDENED_GENERATIONS)).isPositive();
        // The commands reach each screen task in the attempt that runs when they are read (and
        // again after the restore if no checkpoint had seen them); their effect is in state.
        List<Map<String, Metric>> screens = groups(job, BloomScreen.DEFAULT_UID);
        assertThat(sum(screens, ScreenMetrics.LOAD_ERRORS)).isGreaterThanOrEqualTo(2);
        assertThat(sum(screens, ScreenMetrics.COMMAND_ERRORS)).isGreaterThanOrEqualTo(2);
        for (Map<String, Metric> m : groups(job, BloomScreen.DEFAULT_UID, 1)) {
            assertThat(gauge(m, ScreenMetrics.OVERLAY_ENTRIES)).isEqualTo(1);
            assertThat(gauge(m, ScreenMetrics.COMMAND_SEQUENCE)).isEqualTo(3);
        }
    }

    /** The metrics of every subtask and attempt of the operator named {@code operator}. */
    static List<Map<String, Metric>> groups(JobID job, String operator) {
        return groups(job, operator, -1);
    }

    /**
     * The same, of attempt {@code attempt} only (all attempts if negative): one map per subtask and
     * attempt, merging the operator's groups (its own and its I/O group).
     */
    static List<Map<String, Metric>> groups(JobID job, String operator, int attempt) {
        Map<String, Map<String, Metric>> bySubtask = new java.util.TreeMap<>();
        for (Map.Entry<MetricGroup, Map<String, Metric>> e :
                REPORTER.getMetricsByGroup().entrySet()) {
            Map<String, String> v = e.getKey().getAllVariables();
            if (job.toString().equals(v.get("<job_id>"))
                    && operator.equals(v.get("<operator_name>"))
                    && (attempt < 0
                            || Integer.toString(attempt).equals(v.get("<task_attempt_num>")))) {
                bySubtask
                        .computeIfAbsent(
                                v.get("<subtask_index>") + "/" + v.get("<task_attempt_num>"),
                                k -> new java.util.HashMap<>())
                        .putAll(e.getValue());
            }
        }
        return new ArrayList<>(bySubtask.values());
    }

    static Object metric(Map<String, Metric> metrics, String name) {
        Metric m = metrics.get(name);
        assertThat(m).as("metric %s in %s", name, metrics.keySet()).isNotNull();
        return m instanceof Gauge ? ((Gauge<?>) m).getValue() : ((Counter) m).getCount();
    }

    static long gauge(Map<String, Metric> metrics, String name) {
        return ((Number) metric(metrics, name)).longValue();
    }

    static long sum(List<Map<String, Metric>> groups, String counter) {
        assertThat(groups).as("groups with %s", counter).isNotEmpty();
        long n = 0;
        for (Map<String, Metric> m : groups) {
            n += (Long) metric(m, counter);
        }
        return n;
    }
}
