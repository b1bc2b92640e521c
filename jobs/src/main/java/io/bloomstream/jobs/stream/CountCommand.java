package io.bloomstream.jobs.stream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.bloomstream.filter.Sizing;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.count.CountConfig;
import io.bloomstream.flink.count.CountEstimate;
import io.bloomstream.flink.internal.Shards;
import io.bloomstream.jobs.console.FilterHealth;
import io.bloomstream.jobs.console.LocalMetrics;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Durations;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rejects;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.DoubleMaximum;
import org.apache.flink.api.common.accumulators.IntMaximum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code count}: distinct-count estimates per key as JSON lines. */
@Command(
        name = "count",
        mixinStandardHelpOptions = true,
        description = {
            "Estimates distinct items per key from Bloom filter bits and writes JSON lines (key,"
                    + " estimate, lower, upper, ...) every --interval and at the end; the last"
                    + " record of each key has \"final\": true.",
            "Text input: each line is an item, one key \"*\". JSON lines: --id-field is the item"
                    + " and --key-field the key (else one key \"*\")."
        })
public final class CountCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Mixin IoOptions io;

    @Mixin RunOptions console;

    @Mixin RecordFormat records;

    @Option(
            names = "--expected-items",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "Distinct items expected per key (default ${DEFAULT-VALUE}; it grows past it).")
    long expectedItems = FilterSizing.DEFAULT_EXPECTED_ITEMS;

    /**
     * The default of {@code --interval}: shorter than the library's ({@link
     * CountConfig#DEFAULT_INTERVAL}) so that a run from the command line shows estimates soon.
     */
    static final String DEFAULT_INTERVAL = "10s";

    @Option(
            names = "--interval",
            paramLabel = "DURATION",
            defaultValue = DEFAULT_INTERVAL,
            description = "Emission interval, processing time (default ${DEFAULT-VALUE}).",
            converter = Durations.DurationConverter.class)
    Duration interval;

    @Option(
            names = "--window",
            paramLabel = "DURATION",
            description =
                    "Count per tumbling window of processing time instead (with --key-field): one"
                            + " final record per key and window, its state then freed.",
            converter = Durations.DurationConverter.class)
    Duration window;

    /**
     * What the count pipeline needs, from the flags.
     *
     * @param parser reads the item as the first value, and the key if the counts are per key
     * @param perKey counts per key instead of one count over the stream (key "*")
     * @param config the filters, the interval and the windows
     */
    public record Settings(LineParser parser, boolean perKey, CountConfig config) {}

    @Override
    public Integer call() throws Exception {
        io.validate("count");
        Settings settings = settings();
        StreamExecutionEnvironment env = io.environment(LocalMetrics.configuration(io.runId));
        Outputs out = pipeline(io.source(env, "input"), settings);
        io.writeOutput(out.records());
        io.writeRejected(out.rejected());
        RunOptions.Run run = console.execute(spec, io, env, "bloomstream count", stateSettings());
        if (!io.kafka()) {
            Commands.summary(
                    spec,
                    console,
                    run,
                    "estimates",
                    io.output,
                    List.of(health(run, settings.config(), settings.perKey())));
        }
        return 0;
    }

    /**
     * The options the state depends on, recorded in a {@code --state-dir}: a later run with other
     * values is refused.
     */
    java.util.Map<String, String> stateSettings() {
        java.util.Map<String, String> s = new java.util.LinkedHashMap<>();
        s.put("--expected-items", String.valueOf(expectedItems));
        records.record(s);
        s.put("--window", window == null ? null : window.toString());
        return s;
    }

    /** The settings of the flags, checked: a bad combination is a usage error. */
    Settings settings() {
        LineParser parser = records.parser();
        if (window != null && !records.keyed()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--window needs --key-field (global counts have none)");
        }
        CountConfig config =
                Commands.config(
                        spec,
                        () -> {
                            CountConfig.Builder b =
                                    CountConfig.builder()
                                            .filter(
                                                    FilterSizing.builder()
                                                            .expectedItems(expectedItems)
                                                            .build())
                                            .interval(interval);
                            if (window != null) {
                                b.window(window);
                            }
                            return b.build();
                        });
        return new Settings(parser, records.keyed(), config);
    }

    /**
     * The count job from input lines to its outputs: the estimates as JSON lines (see {@link
     * #json}), every interval and at the end, and the rejected lines. Keeps the health figures of
     * the summary in accumulators ({@link HealthTally}).
     */
    public static Outputs pipeline(DataStream<String> lines, Settings settings) {
        SingleOutputStreamOperator<Parsed> parsed =
                lines.process(new Rejects(settings.parser(), true))
                        .returns(Parsed.TYPE)
                        .name("parse")
                        .uid("parse");
        IdSelector<Parsed> item = IdSelector.ofString(p -> p.values[0]);
        DataStream<CountEstimate> estimates =
                settings.perKey()
                        ? BloomCount.perKey(
                                parsed.keyBy(p -> p.key, Types.STRING), item, settings.config())
                        : BloomCount.global(parsed, item, settings.config());
        DataStream<String> json =
                estimates
                        .map(new HealthTally(firstStagePageBits(settings)))
                        .name("health")
                        .uid("health")
                        .map(CountCommand::json)
                        .returns(Types.STRING)
                        .name("json")
                        .uid("json");
        return new Outputs(json, parsed.getSideOutput(Rejects.TAG));
    }

    /** The page size of a key's (global: a shard's) first stage, for the rate's paged model. */
    static int firstStagePageBits(Settings settings) {
        FilterSizing sizing = settings.config().filter();
        long items =
                settings.perKey()
                        ? sizing.expectedItems()
                        : Shards.itemsPerShard(sizing.expectedItems(), settings.config().shards());
        return sizing.stageSpec(items, sizing.fpp(), 0).pageBits();
    }

    /**
     * The health of the count from the accumulators of {@link HealthTally}, and its state from the
     * pages the operator allocated ({@code bloomAllocatedPages}, summed over its subtasks), each of
     * its stages' page size.
     */
    static FilterHealth health(RunOptions.Run run, CountConfig config, boolean perKey) {
        JobExecutionResult r = run.result;
        int stages = (int) number(r, HealthTally.STAGES);
        long pages = -1;
        if (run.metrics != null) {
            pages = 0;
            for (LocalMetrics.DedupFigures f : run.metrics.dedupOperators()) {
                if (f.operator.equals(BloomCount.DEFAULT_UID)) {
                    pages += f.pages;
                }
            }
        }
        FilterSizing sizing = config.filter();
        long items =
                perKey
                        ? sizing.expectedItems()
                        : Shards.itemsPerShard(sizing.expectedItems(), config.shards());
        long low = Long.MAX_VALUE;
        long high = 0;
        for (int i = 0; i < Math.max(1, stages); i++) {
            long bytes = FilterHealth.pageBytes(sizing.stageSpec(items, sizing.fpp(), i));
            low = Math.min(low, bytes);
            high = Math.max(high, bytes);
        }
        return FilterHealth.count(
                BloomCount.DEFAULT_UID,
                number(r, HealthTally.FILL),
                number(r, HealthTally.FPP),
                stages,
                pages,
                low,
                high,
                number(r, HealthTally.ESTIMATE),
                number(r, HealthTally.UPPER),
                config.filter().expectedItems(),
                config.filter().fpp());
    }

    private static double number(JobExecutionResult r, String name) {
        Object v = r.getAccumulatorResult(name);
        return v instanceof Number ? ((Number) v).doubleValue() : 0;
    }

    /**
     * Passes estimates through and keeps, in accumulators, the fullest filter's fill ratio and its
     * rate, the most stages, and of the final records the largest estimate and upper bound. The
     * rate is the layout's model ({@link Sizing#pagedFalsePositiveRate}) at the estimated items, as
     * the dedup's {@code bloomEstimatedFpp} and a filter file's are: fill^k reads 27-40% low for a
     * paged filter. A cascade (its estimate spans stages of other shapes) or a saturated filter
     * keeps fill^k.
     */
    static final class HealthTally extends RichMapFunction<CountEstimate, CountEstimate> {
        private static final long serialVersionUID = 1L;
        private final int pageBits;
        static final String FILL = "health-fill";
        static final String FPP = "health-fpp";
        static final String STAGES = "health-stages";
        static final String ESTIMATE = "health-estimate";
        static final String UPPER = "health-upper";
        private transient DoubleMaximum fill;
        private transient DoubleMaximum fpp;
        private transient IntMaximum stages;
        private transient DoubleMaximum estimate;
        private transient DoubleMaximum upper;

        HealthTally(int pageBits) {
            this.pageBits = pageBits;
        }

        @Override
        public void open(OpenContext ctx) {
            fill = new DoubleMaximum(0);
            fpp = new DoubleMaximum(0);
            stages = new IntMaximum(0);
            estimate = new DoubleMaximum(0);
            upper = new DoubleMaximum(0);
            getRuntimeContext().addAccumulator(FILL, fill);
            getRuntimeContext().addAccumulator(FPP, fpp);
            getRuntimeContext().addAccumulator(STAGES, stages);
            getRuntimeContext().addAccumulator(ESTIMATE, estimate);
            getRuntimeContext().addAccumulator(UPPER, upper);
        }

        @Override
        public CountEstimate map(CountEstimate e) {
            fill.add(e.fillRatio);
            fpp.add(
                    e.stages <= 1 && !e.saturated && Double.isFinite(e.estimate)
                            ? Sizing.pagedFalsePositiveRate(
                                    e.bits, e.hashes, Math.round(e.estimate), pageBits)
                            : Math.pow(e.fillRatio, e.hashes));
            stages.add(e.stages);
            if (e.isFinal) {
                // a saturated filter has no estimate: count it as past any capacity
                estimate.add(e.saturated ? Double.MAX_VALUE : e.estimate);
                upper.add(e.saturated ? 2.0 * e.bits : e.upper);
            }
            return e;
        }
    }

    /** One estimate as a JSON line; NaN (saturated) is written as null. */
    static String json(CountEstimate e) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("key", e.key);
            number(g, "estimate", e.estimate);
            number(g, "lower", e.lower);
            number(g, "upper", e.upper);
            number(g, "standard_error", e.standardError);
            g.writeNumberField("bits_set", e.bitsSet);
            g.writeNumberField("bits", e.bits);
            g.writeNumberField("hashes", e.hashes);
            g.writeNumberField("fill_ratio", e.fillRatio); // small: not rounded
            g.writeNumberField("stages", e.stages);
            g.writeBooleanField("valid", e.valid);
            g.writeBooleanField("saturated", e.saturated);
            g.writeBooleanField("final", e.isFinal);
            g.writeNumberField("timestamp", e.timestamp);
            if (e.windowStart != Long.MIN_VALUE) {
                g.writeNumberField("window_start", e.windowStart);
            }
            g.writeEndObject();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return w.toString();
    }

    private static void number(JsonGenerator g, String name, double v) throws IOException {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, Math.round(v * 1000) / 1000.0);
        }
    }
}
