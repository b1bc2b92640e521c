package io.bloomstream.jobs;

import io.bloomstream.flink.BloomDedup;
import io.bloomstream.flink.DedupConfig;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rejects;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dedup}: writes the first occurrence of each id. */
@Command(
        name = "dedup",
        mixinStandardHelpOptions = true,
        description = {
            "Writes the first occurrence of each id (Bloom filter dedup: a first occurrence is"
                    + " dropped only as a false positive, with at most --fpp).",
            "Text input: the line is the id. JSON lines: --id-field, and --key-field for one"
                    + " filter per key (else one filter over the whole stream)."
        })
final class DedupCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Mixin IoOptions io;

    @Option(
            names = "--expected-items",
            paramLabel = "N",
            description = "Distinct ids expected (per key with --key-field). Default 1000000.")
    long expectedItems = 1_000_000;

    @Option(names = "--fpp", paramLabel = "P", description = "False-positive rate. Default 0.01.")
    double fpp = 0.01;

    @Mixin RecordFormat records;

    @Option(
            names = "--retention",
            paramLabel = "DURATION",
            description = "Forget ids after this long (processing time), e.g. 24h.",
            converter = IoOptions.DurationConverter.class)
    Duration retention;

    /** A hook between parsing and dedup (tests inject failures here). */
    java.util.function.UnaryOperator<DataStream<Parsed>> tap = s -> s;

    @Override
    public Integer call() throws Exception {
        io.validate("dedup");
        StreamExecutionEnvironment env = io.environment();
        build(env);
        var result = env.execute("bloomstream dedup");
        if (!io.kafka()) {
            Commands.summary(spec, result, "first occurrences", io.output);
        }
        return 0;
    }

    /** Builds the job into {@code env} (flags already validated). */
    void build(StreamExecutionEnvironment env) {
        LineParser parser = records.parser();
        DedupConfig config =
                Commands.config(
                        spec,
                        () -> {
                            DedupConfig.Builder b =
                                    DedupConfig.builder().expectedItems(expectedItems).fpp(fpp);
                            if (retention != null) {
                                b.retention(retention, DedupConfig.TimeDomain.PROCESSING_TIME);
                            }
                            return b.build();
                        });
        SingleOutputStreamOperator<Parsed> parsed =
                io.source(env, "input")
                        .process(new Rejects(parser, true))
                        .returns(Parsed.TYPE)
                        .name("parse")
                        .uid("parse");
        io.writeOutput(pipeline(tap.apply(parsed), records.keyed(), config));
        io.writeRejected(parsed.getSideOutput(Rejects.TAG));
    }

    /** First occurrences of {@code values[0]}, per key or over the whole stream; raw lines out. */
    static DataStream<String> pipeline(
            DataStream<Parsed> parsed, boolean perKey, DedupConfig config) {
        IdSelector<Parsed> id = IdSelector.ofString(p -> p.values[0]);
        DataStream<Parsed> firsts =
                perKey
                        ? BloomDedup.perKey(parsed.keyBy(p -> p.key, Types.STRING), id, config)
                        : BloomDedup.global(parsed, id, config);
        return firsts.map(p -> p.raw).returns(Types.STRING).name("raw").uid("raw");
    }
}
