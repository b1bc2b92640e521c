package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessAllWindowFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mini-cluster tests of the order and the watermarks of {@link BloomScreen}'s command stream: a
 * command stream of parallelism 2 racing adds against removes of the same entries leaves every
 * screening task with the same overlay, and an unbounded command stream without watermarks does not
 * stop an event-time window after the screen from firing.
 */
class FilterUpdateOrderITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int PARALLELISM = 2;
    private static final int ENTRIES = 50;
    private static final int COMMANDS = 40_000; // the first half adds, the second half removes

    /** Per screening subtask, the commands it applied, in order. */
    static final Map<Integer, List<FilterUpdate>> APPLIED = new ConcurrentHashMap<>();

    static final AtomicInteger APPLIED_COUNT = new AtomicInteger();

    /** Window results: (window end, events in it). */
    static final ConcurrentLinkedQueue<Tuple2<Long, Long>> WINDOWS = new ConcurrentLinkedQueue<>();

    /** Counts the windows down as they arrive, so the test waits on them with a deadline. */
    static volatile CountDownLatch windowsFired = new CountDownLatch(0);

    static String entry(long i) {
        return "racer" + (i % ENTRIES) + "@race.example";
    }

    /**
     * Command {@code i}: the data generator gives each of the two source subtasks half of the
     * indices, so one subtask adds every entry over and over while the other removes them.
     */
    static FilterUpdate command(long i) {
        return i < COMMANDS / 2 ? FilterUpdate.add(entry(i)) : FilterUpdate.remove(entry(i));
    }

    /** Records the commands each task applied. */
    static final class RecordingScreen extends ScreenFunction<String> {
        private static final long serialVersionUID = 1L;

        RecordingScreen(ScreenConfig<String> config) {
            super(
                    config,
                    BloomScreen.flaggedTag(Types.STRING),
                    BloomScreen.rejectedTag(Types.STRING));
        }

        @Override
        protected void commandApplied(FilterUpdate command) {
            APPLIED.computeIfAbsent(
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                    .add(command);
            APPLIED_COUNT.incrementAndGet();
        }
    }

    static Path filterFile(Path tmp) throws Exception {
        BloomFilter filter = BloomFilter.create(FilterSpec.forItems(1000, 0.01));
        filter.add(Normalization.EMAIL.apply("listed@bad.example"));
        Path file = tmp.resolve("spam.bloom");
        Files.write(file, FilterCodec.encode(filter, Normalization.EMAIL));
        return file;
    }

    static ScreenConfig<String> config(Path file) {
        return ScreenConfig.<String>builder()
                .filterPath(file.toUri().toString())
                .normalization(Normalization.EMAIL)
                .field("from", e -> e.split("\\|", -1)[1])
                .build();
    }

    @Test
    void commandsFromTwoProducerSubtasksLeaveEveryTaskWithTheSameOverlay(@TempDir Path tmp)
            throws Exception {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(Backend.HEAP.jobConfig());
        env.setParallelism(PARALLELISM);
        DataStream<String> events =
                env.fromSource(
                        new DataGeneratorSource<>(
                                i -> i + "|" + entry(i / PARALLELISM), 0, Types.STRING),
                        WatermarkStrategy.noWatermarks(),
                        "events");
        DataStream<FilterUpdate> commands =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        FilterUpdateOrderITCase::command,
                                        COMMANDS,
                                        BloomScreen.commandType()),
                                WatermarkStrategy.noWatermarks(),
                                "commands")
                        .setParallelism(2);
        ScreenConfig<String> config = config(filterFile(tmp));
        BloomScreen.apply(events, commands, new RecordingScreen(config), config.uidPrefix())
                .sinkTo(new DiscardingSink<>());

        StreamGraph graph = env.getStreamGraph(false);
        StreamNode screen =
                graph.getStreamNodes().stream()
                        .filter(n -> n.getOperatorName().equals(config.uidPrefix()))
                        .findFirst()
                        .orElseThrow();
        StreamNode producer = graph.getStreamNode(screen.getInEdges().get(1).getSourceId());
        assertThat(producer.getParallelism())
                .as("the commands reach the screen from one producer subtask")
                .isEqualTo(1);
        assertThat(producer.getMaxParallelism()).as("and no rescale can add one").isEqualTo(1);

        env.execute("screen-command-order");

        assertThat(APPLIED).hasSize(PARALLELISM);
        List<FilterUpdate> first = APPLIED.get(0);
        assertThat(first).hasSize(COMMANDS);
        assertThat(APPLIED.get(1))
                .as("every task applied the same commands in the same order")
                .isEqualTo(first);
    }

    /** Counts events per event-time window. */
    static final class CountWindow
            extends ProcessAllWindowFunction<String, Tuple2<Long, Long>, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Context context, Iterable<String> elements, Collector<Tuple2<Long, Long>> out) {
            long n = 0;
            for (String ignored : elements) {
                n++;
            }
            out.collect(Tuple2.of(context.window().getEnd(), n));
        }
    }

    /** Collects window results (the mini cluster runs in this JVM). */
    static final class CollectWindows implements Sink<Tuple2<Long, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<Tuple2<Long, Long>> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Tuple2<Long, Long> element, Context context) {
                    WINDOWS.add(element);
                    windowsFired.countDown();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    @Test
    void anUnboundedCommandStreamWithoutWatermarksDoesNotHoldBackEventTimeWindows(@TempDir Path tmp)
            throws Exception {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(Backend.HEAP.jobConfig());
        env.setParallelism(PARALLELISM);
        // 2,000 events, 10 ms of event time apart: windows of one second hold 100 each.
        DataStream<String> events =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> i + "|user" + i + "@good.example",
                                        2_000,
                                        Types.STRING),
                                WatermarkStrategy.<String>forMonotonousTimestamps()
                                        .withTimestampAssigner(
                                                (e, ts) -> 10 * Long.parseLong(e.split("\\|")[0])),
                                "events")
                        .setParallelism(1);
        // Never finishes and never emits a watermark.
        DataStream<FilterUpdate> commands =
                env.fromSource(
                        new DataGeneratorSource<>(
                                i -> FilterUpdate.add("live" + i + "@spam.example"),
                                Long.MAX_VALUE,
                                RateLimiterStrategy.perSecond(1),
                                BloomScreen.commandType()),
                        WatermarkStrategy.noWatermarks(),
                        "commands");
        ScreenConfig<String> config = config(filterFile(tmp));
        SingleOutputStreamOperator<String> clean = BloomScreen.screen(events, commands, config);
        clean.windowAll(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                .process(new CountWindow())
                .returns(Types.TUPLE(Types.LONG, Types.LONG))
                .sinkTo(new CollectWindows())
                .setParallelism(1);

        WINDOWS.clear();
        windowsFired = new CountDownLatch(20);
        JobClient job = env.executeAsync("screen-watermarks");
        try {
            windowsFired.await(60, TimeUnit.SECONDS);
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
        assertThat(WINDOWS)
                .as("every one-second window of the 20 s of event time fired")
                .hasSize(20)
                .allSatisfy(w -> assertThat(w.f1).isEqualTo(100L));
    }
}
