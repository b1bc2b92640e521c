package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the stream jobs' {@code pipeline} methods, each run with the test's own source (a few
 * lines in memory) and sink (collected), at parallelism 2 with Kryo off; the settings are parsed
 * from flags as the command line parses them.
 */
class StreamPipelinesITCase {

    @TempDir Path tmp;

    @Test
    void dedupWritesTheFirstOccurrenceOfEachIdAndRejectsLinesWithoutOne() throws Exception {
        DedupCommand.Settings settings =
                this.<DedupCommand>parse("dedup", "--format", "json", "--id-field", "id")
                        .settings();
        StreamExecutionEnvironment env = environment();
        Outputs out =
                DedupCommand.pipeline(
                        env.fromData(
                                "{\"id\":\"a\",\"n\":1}",
                                "{\"id\":\"b\",\"n\":2}",
                                "{\"id\":\"a\",\"n\":3}",
                                "{\"n\":4}",
                                "not json"),
                        settings);
        List<String> got = collect(out.records(), out.rejected());
        assertThat(got)
                .filteredOn(l -> l.startsWith("out "))
                .containsExactlyInAnyOrder(
                        "out {\"id\":\"a\",\"n\":1}", "out {\"id\":\"b\",\"n\":2}");
        assertThat(got)
                .filteredOn(l -> l.startsWith("rejected "))
                .hasSize(2)
                .anyMatch(l -> l.contains("missing field 'id'"))
                .anyMatch(l -> l.contains("not JSON"));
    }

    @Test
    void frontierWritesEachNormalizedUrlOnceAndRejectsMalformedOnes() throws Exception {
        StreamExecutionEnvironment env = environment();
        Outputs out =
                FrontierCommand.pipeline(
                        env.fromData(
                                "HTTP://Example.com:80/a/./b",
                                "http://example.com/a/b#top",
                                "https://other.example/",
                                "just some words"),
                        this.<FrontierCommand>parse("frontier").config());
        List<String> got = collect(out.records(), out.rejected());
        assertThat(got)
                .filteredOn(l -> l.startsWith("out "))
                .containsExactlyInAnyOrder(
                        "out http://example.com/a/b", "out https://other.example/");
        assertThat(got)
                .filteredOn(l -> l.startsWith("rejected "))
                .singleElement()
                .asString()
                .contains("just some words");
    }

    @Test
    void countWritesAFinalEstimatePerKey() throws Exception {
        CountCommand.Settings settings =
                this.<CountCommand>parse(
                                "count",
                                "--format",
                                "json",
                                "--id-field",
                                "user",
                                "--key-field",
                                "page",
                                "--expected-items",
                                "1000")
                        .settings();
        StreamExecutionEnvironment env = environment();
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            lines.add("{\"page\":\"p" + (i % 2) + "\",\"user\":\"u" + (i % 10) + "\"}");
        }
        Outputs out = CountCommand.pipeline(env.fromData(lines), settings);
        List<Map<String, Object>> finals = new ArrayList<>();
        for (String l : collect(out.records(), out.rejected())) {
            assertThat(l).startsWith("out ");
            Map<String, Object> e = Cli.json(l.substring(4));
            if (Boolean.TRUE.equals(e.get("final"))) {
                finals.add(e);
            }
        }
        // Each page sees 5 distinct users; at 5 items in a filter for 1,000 the estimate from the
        // bits set is within a fraction of one of the truth.
        assertThat(finals).extracting(e -> e.get("key")).containsExactlyInAnyOrder("p0", "p1");
        assertThat(finals)
                .allSatisfy(
                        e ->
                                assertThat(((Number) e.get("estimate")).doubleValue())
                                        .isBetween(4.5, 5.5));
    }

    @Test
    void screenSplitsCleanFlaggedAndRejectedRecords() throws Exception {
        BloomFilter filter = BloomFilter.create(100, 0.001);
        filter.add(Normalization.EMAIL.apply("spammer@bad.example"));
        Path file = tmp.resolve("spam.bloom");
        Files.write(file, FilterCodec.encode(filter, Normalization.EMAIL));
        ScreenCommand.Settings settings =
                this.<ScreenCommand>parse(
                                "screen",
                                "--filter",
                                file.toString(),
                                "--format",
                                "json",
                                "--field",
                                "from")
                        .settings();
        StreamExecutionEnvironment env = environment();
        ScreenCommand.Screened out =
                ScreenCommand.pipeline(
                        env.fromData(
                                "{\"from\":\"Spammer@Bad.Example\"}",
                                "{\"from\":\"alice@good.example\"}",
                                "{\"subject\":\"no sender\"}"),
                        null,
                        settings);
        List<String> got =
                collect(
                        out.clean(),
                        out.rejected(),
                        out.flagged().map(f -> "flagged " + f).returns(Types.STRING));
        assertThat(got).hasSize(3).contains("out {\"from\":\"alice@good.example\"}");
        assertThat(got)
                .filteredOn(l -> l.startsWith("flagged "))
                .singleElement()
                .asString()
                .startsWith("flagged {\"field\":\"from\"")
                .contains("Spammer@Bad.Example");
        assertThat(got)
                .filteredOn(l -> l.startsWith("rejected "))
                .singleElement()
                .asString()
                .contains("screened field missing")
                .contains("no sender");
    }

    /** The command of {@code args}, parsed as the command line parses it. */
    @SuppressWarnings("unchecked")
    private <C> C parse(String... args) {
        return (C) Main.commandLine().parseArgs(args).subcommand().commandSpec().userObject();
    }

    private static StreamExecutionEnvironment environment() {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        return env;
    }

    /**
     * Runs the job and returns the records prefixed {@code "out "}, the rejected ones {@code
     * "rejected "}, and {@code more} as they are.
     */
    @SafeVarargs
    private static List<String> collect(
            DataStream<String> records, DataStream<String> rejected, DataStream<String>... more)
            throws Exception {
        DataStream<String> all =
                records.map(r -> "out " + r)
                        .returns(Types.STRING)
                        .union(rejected.map(r -> "rejected " + r).returns(Types.STRING));
        for (DataStream<String> m : more) {
            all = all.union(m);
        }
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect()) {
            it.forEachRemaining(lines::add);
        }
        return lines;
    }
}
