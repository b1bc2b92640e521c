package io.bloomstream.examples;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.count.CountConfig;
import io.bloomstream.flink.count.CountEstimate;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.screen.BloomScreen;
import io.bloomstream.flink.screen.ScreenConfig;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * A DataStream job on bloomstream: event-time dedup per user with its late output, screening
 * against a filter file of blocked users, and a distinct count of event ids per user. Prints one
 * sorted line per result, so that a run can be compared with the expected output.
 */
public final class DataStreamExample {

    private DataStreamExample() {}

    /** Runs the job on a local mini-cluster (or the cluster of {@code flink run}). */
    public static void main(String[] args) throws Exception {
        Path filterFile = Files.createTempFile("blocked-users", ".bloom");
        // The screen's filter file: bloomstream's build-filter command makes these from a list;
        // here the filter core writes it directly.
        BloomFilter blocked = BloomFilter.create(1_000, 0.01);
        blocked.add(Normalization.LOWERCASE.apply("mallory"));
        try (OutputStream out = Files.newOutputStream(filterFile)) {
            FilterCodec.write(blocked, Normalization.LOWERCASE, out);
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        TypeInformation<Event> type = TypeInformation.of(Event.class);
        DataStream<Event> events =
                env.fromData(
                                new Event("alice", "a1", 1_000),
                                new Event("alice", "a2", 2_000),
                                new Event("alice", "a1", 3_000), // a repeat: dropped
                                new Event("bob", "b1", 4_000),
                                new Event("alice", "a3", 1_500), // behind the watermark: late
                                new Event("mallory", "m1", 5_000), // blocked: flagged
                                new Event("bob", "b2", 6_000),
                                new Event("bob", "b1", 7_000)) // a repeat: dropped
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy.<Event>forGenerator(ctx -> new EveryEvent())
                                        .withTimestampAssigner((e, ts) -> e.time))
                        .name("events")
                        .uid("events");

        // 1. Dedup per user, remembering ids for a day of event time.
        DedupConfig dedupConfig =
                DedupConfig.builder()
                        .expectedItems(10_000)
                        .fpp(0.001)
                        .retention(Duration.ofDays(1), TimeDomain.EVENT_TIME)
                        .build();
        SingleOutputStreamOperator<Event> firsts =
                BloomDedup.perKey(
                        events.keyBy(e -> e.user), IdSelector.ofString(e -> e.id), dedupConfig);
        DataStream<String> late =
                firsts.getSideOutput(BloomDedup.lateTag(type)).map(e -> "late " + e);

        // 2. Screen the first occurrences against the blocked users.
        ScreenConfig<Event> screenConfig =
                ScreenConfig.<Event>builder()
                        .filterPath(filterFile.toUri().toString())
                        .field("user", e -> e.user)
                        .build();
        SingleOutputStreamOperator<Event> clean = BloomScreen.screen(firsts, screenConfig);
        DataStream<String> flagged =
                clean.getSideOutput(BloomScreen.flaggedTag(type)).map(m -> "flagged " + m);

        // 3. Distinct event ids per user, among the clean events.
        CountConfig countConfig =
                CountConfig.builder()
                        .filter(FilterSizing.builder().expectedItems(10_000).fpp(0.01).build())
                        .build();
        DataStream<String> counts =
                BloomCount.perKey(
                                clean.keyBy(e -> e.user), IdSelector.ofString(e -> e.id), countConfig)
                        .filter(c -> c.isFinal)
                        .map(DataStreamExample::describe);

        DataStream<String> results =
                clean.map(e -> "clean " + e).union(late, flagged, counts);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it = results.executeAndCollect("bloomstream example")) {
            it.forEachRemaining(lines::add);
        }
        lines.sort(null);
        lines.forEach(System.out::println);
        Files.delete(filterFile);
    }

    private static String describe(CountEstimate c) {
        return "count " + c.key + " " + Math.round(c.estimate);
    }

    /** A watermark after every event (its time - 1 ms), so that lateness does not depend on timing. */
    private static final class EveryEvent implements WatermarkGenerator<Event> {
        private long max = Long.MIN_VALUE;

        @Override
        public void onEvent(Event e, long ts, WatermarkOutput out) {
            if (ts > max) {
                max = ts;
                out.emitWatermark(new Watermark(max - 1));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }
}
