package io.bloomstream.jobs.stream;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.jobs.console.LocalMetrics;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rates;
import io.bloomstream.jobs.io.Rejects;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code frontier}: a crawler's to-visit queue, deduplicated per host. */
@Command(
        name = "frontier",
        mixinStandardHelpOptions = true,
        description = {
            "Normalizes URLs (one a line), keys them by host, drops the ones seen before and"
                    + " writes the rest in arrival order per host. Malformed URLs go to"
                    + " OUTPUT/_rejected.",
            "Normalization: scheme and host lowercased, trailing dot of the host and default"
                    + " port dropped, fragment dropped, dot segments resolved, escapes of"
                    + " unreserved characters decoded and other escapes uppercased, empty query"
                    + " dropped. Path case, query order and trailing slashes are kept."
        })
public final class FrontierCommand implements Callable<Integer> {

    /**
     * The default of {@code --expected-items}: a host's URLs, fewer than the library's default for
     * a whole stream ({@link DedupConfig#DEFAULT_EXPECTED_ITEMS}) since there is a filter per host.
     */
    static final long DEFAULT_EXPECTED_URLS_PER_HOST = 100_000;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Mixin IoOptions io;

    @Mixin RunOptions console;

    @Option(
            names = "--expected-items",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "Distinct URLs expected per host (default ${DEFAULT-VALUE}; filters grow past"
                            + " it).")
    long expectedItems = DEFAULT_EXPECTED_URLS_PER_HOST;

    @Option(
            names = "--fpp",
            paramLabel = "P",
            converter = Rates.Converter.class,
            description = "False-positive rate, e.g. 0.01 or 1%%. Default ${DEFAULT-VALUE}.")
    double fpp = DedupConfig.DEFAULT_FPP;

    @Option(
            names = "--exact",
            description =
                    "Exact mode: keep each host's URLs themselves behind its filter, which then"
                            + " only saves reads. No new URL is ever dropped; state grows with the"
                            + " distinct URLs (see docs/dedup.md).")
    boolean exact;

    @Override
    public Integer call() throws Exception {
        io.validate("frontier");
        DedupConfig config = config();
        StreamExecutionEnvironment env = io.environment(LocalMetrics.configuration(io.runId));
        Outputs out = pipeline(io.source(env, "input"), config);
        io.writeOutput(out.records());
        io.writeRejected(out.rejected());
        RunOptions.Run run =
                console.execute(spec, io, env, "bloomstream frontier", stateSettings());
        if (!io.kafka()) {
            Commands.summary(
                    spec,
                    console,
                    run,
                    "new URLs",
                    io.output,
                    DedupCommand.health(run, config, false, "URLs"));
        }
        return 0;
    }

    /** The flags that shape the state, as {@code --state-dir} records them. */
    java.util.Map<String, String> stateSettings() {
        java.util.Map<String, String> s = new java.util.LinkedHashMap<>();
        s.put("--expected-items", String.valueOf(expectedItems));
        s.put("--fpp", String.valueOf(fpp));
        s.put("--exact", exact ? "true" : null);
        return s;
    }

    /** The filters of the flags: one per host. */
    DedupConfig config() {
        return Commands.config(
                spec,
                () ->
                        DedupConfig.builder()
                                .expectedItems(expectedItems)
                                .fpp(fpp)
                                .exact(exact)
                                .build());
    }

    /**
     * The frontier job from input lines to its outputs: each normalized URL the first time it is
     * seen, per host in arrival order, and the malformed lines, rejected.
     */
    public static Outputs pipeline(DataStream<String> lines, DedupConfig config) {
        SingleOutputStreamOperator<Parsed> urls =
                lines.process(new Rejects(FrontierCommand::normalize))
                        .returns(Parsed.TYPE)
                        .name("normalize")
                        .uid("normalize");
        DataStream<String> fresh =
                BloomDedup.perKey(
                                urls.keyBy(p -> p.key, Types.STRING),
                                IdSelector.ofString(p -> p.values[0]),
                                config)
                        .map(p -> p.values[0])
                        .returns(Types.STRING)
                        .name("url")
                        .uid("url");
        return new Outputs(fresh, urls.getSideOutput(Rejects.TAG));
    }

    /** The normalized URL of a line, keyed by its host. */
    static Parsed normalize(String line) throws LineParser.BadRecord {
        try {
            String url = UrlNormalizer.normalize(line);
            return new Parsed(line, UrlNormalizer.host(url), new String[] {url});
        } catch (UrlNormalizer.MalformedUrl e) {
            throw new LineParser.BadRecord(e.getMessage());
        }
    }
}
