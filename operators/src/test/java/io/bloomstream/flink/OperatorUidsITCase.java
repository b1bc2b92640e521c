package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.count.BloomOverlap;
import io.bloomstream.flink.count.CountConfig;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.screen.BloomScreen;
import io.bloomstream.flink.screen.ScreenConfig;
import io.bloomstream.testing.KeyedEvents;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests the uids and names of the operators that {@link BloomDedup}, {@link BloomScreen}, {@link
 * BloomCount} and {@link BloomOverlap} add: the defaults of earlier releases, and one prefix per
 * call so that several of each fit in one job. Events are "key,id" strings.
 */
class OperatorUidsITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int IDS = 300;

    @TempDir Path tmp;

    private static DataStream<String> events(StreamExecutionEnvironment env) {
        List<String> events =
                LongStream.range(0, 2 * IDS)
                        .mapToObj(i -> "k" + (i % 3) + "," + (i % IDS))
                        .collect(Collectors.toList());
        return env.fromData(events).name("events").uid("events");
    }

    private ScreenConfig.Builder<String> screenConfig() throws Exception {
        Path file = tmp.resolve("list.bloom");
        if (!Files.exists(file)) {
            BloomFilter listed = BloomFilter.create(FilterSpec.forItems(100, 0.0001));
            listed.add("7");
            listed.add("42");
            Files.write(file, FilterCodec.encode(listed, Normalization.LOWERCASE));
        }
        return ScreenConfig.<String>builder()
                .filterPath(file.toUri().toString())
                .field("id", KeyedEvents::id);
    }

    private static CountConfig.Builder countConfig() {
        return CountConfig.builder()
                .filter(FilterSizing.builder().expectedItems(10_000).fpp(0.01).fixed().build());
    }

    /** The uid and name of every node of the job {@code build} makes, by uid. */
    private static Map<String, String> uids(Consumer<StreamExecutionEnvironment> build) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        build.accept(env);
        StreamGraph graph = env.getStreamGraph();
        Map<String, String> names = new TreeMap<>();
        for (StreamNode node : graph.getStreamNodes()) {
            if (node.getTransformationUID() != null) {
                names.put(node.getTransformationUID(), node.getOperatorName());
            }
        }
        names.remove("events");
        graph.getJobGraph(); // checks that no two uids collide
        return names;
    }

    @Test
    void defaultUidsAndNamesAreThoseOfEarlierReleases() throws Exception {
        DedupConfig dedup = DedupConfig.builder().expectedItems(1000).build();
        assertThat(
                        uids(
                                env ->
                                        BloomDedup.perKey(
                                                        events(env)
                                                                .keyBy(
                                                                        KeyedEvents::key,
                                                                        Types.STRING),
                                                        KeyedEvents.idSelector(),
                                                        dedup)
                                                .sinkTo(new DiscardingSink<>())))
                .isEqualTo(Map.of("bloom-dedup", "bloom-dedup"));
        assertThat(
                        uids(
                                env ->
                                        BloomDedup.global(
                                                        events(env),
                                                        KeyedEvents.idSelector(),
                                                        dedup)
                                                .sinkTo(new DiscardingSink<>())))
                .as("global mode's stateless hashing step (0.5) has a uid of its own")
                .isEqualTo(
                        Map.of(
                                "bloom-dedup",
                                "bloom-dedup",
                                "bloom-dedup-hash",
                                "bloom-dedup-hash"));
        ScreenConfig<String> screen = screenConfig().build();
        assertThat(
                        uids(
                                env ->
                                        BloomScreen.screen(events(env), screen)
                                                .sinkTo(new DiscardingSink<>())))
                .isEqualTo(
                        Map.of(
                                "bloom-screen", "bloom-screen",
                                "bloom-screen-commands", "bloom-screen-commands",
                                "no-screen-commands", "Source: no-screen-commands",
                                "no-screen-commands-flat", "no-screen-commands-flat"));
        CountConfig count = countConfig().build();
        assertThat(
                        uids(
                                env ->
                                        BloomCount.perKey(
                                                        events(env)
                                                                .keyBy(
                                                                        KeyedEvents::key,
                                                                        Types.STRING),
                                                        KeyedEvents.idSelector(),
                                                        count)
                                                .sinkTo(new DiscardingSink<>())))
                .isEqualTo(Map.of("bloom-count", "bloom-count"));
        assertThat(
                        uids(
                                env ->
                                        BloomCount.global(
                                                        events(env),
                                                        KeyedEvents.idSelector(),
                                                        count)
                                                .sinkTo(new DiscardingSink<>())))
                .isEqualTo(
                        Map.of("bloom-count", "bloom-count", "bloom-count-sum", "bloom-count-sum"));
        assertThat(
                        uids(
                                env -> {
                                    DataStream<String> e = events(env);
                                    BloomOverlap.between(
                                                    e.keyBy(KeyedEvents::key, Types.STRING),
                                                    KeyedEvents.idSelector(),
                                                    e.keyBy(KeyedEvents::key, Types.STRING),
                                                    KeyedEvents.idSelector(),
                                                    count)
                                            .sinkTo(new DiscardingSink<>());
                                }))
                .isEqualTo(Map.of("bloom-overlap", "bloom-overlap"));
    }

    /**
     * With the defaults, this job failed: hash collision on user-specified ID no-screen-commands.
     */
    @Test
    void twoCommandlessScreensAndTwoGlobalCountsRunInOneJobWithTheirOwnPrefixes() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        DataStream<String> events = events(env);
        List<DataStream<String>> outputs = new ArrayList<>();
        for (String p : List.of("screen-a", "screen-b")) {
            outputs.add(
                    BloomScreen.screen(events, screenConfig().uidPrefix(p).build())
                            .getSideOutput(BloomScreen.flaggedTag(Types.STRING))
                            .map(m -> p + " flagged " + m.value)
                            .returns(Types.STRING));
        }
        for (String p : List.of("count-a", "count-b")) {
            outputs.add(
                    BloomCount.global(
                                    events,
                                    KeyedEvents.idSelector(),
                                    countConfig().uidPrefix(p).build())
                            .filter(e -> e.isFinal)
                            .map(e -> p + " final " + e.estimate + " " + e.standardError)
                            .returns(Types.STRING));
        }
        for (String p : List.of("dedup-a", "dedup-b")) {
            outputs.add(
                    BloomDedup.withUidPrefix(p)
                            .global(
                                    events,
                                    KeyedEvents.idSelector(),
                                    DedupConfig.builder().expectedItems(10_000).build())
                            .map(e -> p + " first")
                            .returns(Types.STRING));
        }
        List<String> out = new ArrayList<>();
        DataStream<String> all = outputs.get(0);
        for (DataStream<String> o : outputs.subList(1, outputs.size())) {
            all = all.union(o);
        }
        try (var results = all.executeAndCollect()) {
            results.forEachRemaining(out::add);
        }
        // Each screen flags the two listed ids at each of their two occurrences.
        for (String p : List.of("screen-a", "screen-b")) {
            assertThat(out.stream().filter(s -> s.startsWith(p)))
                    .containsExactlyInAnyOrder(
                            p + " flagged 7",
                            p + " flagged 7",
                            p + " flagged 42",
                            p + " flagged 42");
        }
        // Each global count ends with its final sum: within 4 of its standard errors of the truth.
        for (String p : List.of("count-a", "count-b")) {
            List<String> finals =
                    out.stream().filter(s -> s.startsWith(p)).collect(Collectors.toList());
            assertThat(finals).isNotEmpty();
            String[] last = finals.get(finals.size() - 1).split(" ");
            double estimate = Double.parseDouble(last[2]);
            double se = Double.parseDouble(last[3]);
            assertThat(Math.abs(estimate - IDS)).as("%s", finals).isLessThanOrEqualTo(4 * se + 0.5);
        }
        // Each dedup passes each id once but for false positives: at 3% of its capacity the
        // filter's rate is far below 1e-4, so P(more than 3 of 300 dropped) is below 1e-10.
        for (String p : List.of("dedup-a", "dedup-b")) {
            assertThat(out.stream().filter(s -> s.startsWith(p)).count())
                    .isBetween((long) IDS - 3, (long) IDS);
        }
    }

    @Test
    void prefixesNameEveryOperatorTheLibraryAdds() throws Exception {
        ScreenConfig<String> screen = screenConfig().uidPrefix("spam").build();
        CountConfig count = countConfig().uidPrefix("users").build();
        assertThat(
                        uids(
                                env -> {
                                    DataStream<String> e = events(env);
                                    BloomScreen.screen(e, screen).sinkTo(new DiscardingSink<>());
                                    BloomCount.global(e, KeyedEvents.idSelector(), count)
                                            .sinkTo(new DiscardingSink<>());
                                    BloomOverlap.between(
                                                    e.keyBy(KeyedEvents::key, Types.STRING),
                                                    KeyedEvents.idSelector(),
                                                    e.keyBy(KeyedEvents::key, Types.STRING),
                                                    KeyedEvents.idSelector(),
                                                    countConfig().uidPrefix("overlap").build())
                                            .sinkTo(new DiscardingSink<>());
                                    BloomDedup.withUidPrefix("firsts")
                                            .perKey(
                                                    e.keyBy(KeyedEvents::key, Types.STRING),
                                                    KeyedEvents.idSelector(),
                                                    DedupConfig.builder().build())
                                            .sinkTo(new DiscardingSink<>());
                                    BloomDedup.withUidPrefix("ids")
                                            .global(
                                                    e,
                                                    KeyedEvents.idSelector(),
                                                    DedupConfig.builder().build())
                                            .sinkTo(new DiscardingSink<>());
                                }))
                .isEqualTo(
                        Map.of(
                                "spam", "spam",
                                "spam-commands", "spam-commands",
                                "spam-no-commands", "Source: spam-no-commands",
                                "spam-no-commands-flat", "spam-no-commands-flat",
                                "users", "users",
                                "users-sum", "users-sum",
                                "overlap", "overlap",
                                "firsts", "firsts",
                                "ids", "ids",
                                "ids-hash", "ids-hash"));
    }

    @Test
    void blankPrefixesAreRefusedNamingTheArgument() {
        assertThatThrownBy(() -> BloomDedup.withUidPrefix(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("uidPrefix must not be blank, was ' '");
        assertThatThrownBy(() -> CountConfig.builder().uidPrefix(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uidPrefix");
        assertThatThrownBy(() -> ScreenConfig.<String>builder().uidPrefix(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uidPrefix");
    }
}
