package io.bloomstream.jobs.stream;

import io.bloomstream.flink.EventTimeBound;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.jobs.console.FilterHealth;
import io.bloomstream.jobs.console.LocalMetrics;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Durations;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rates;
import io.bloomstream.jobs.io.Rejects;
import io.bloomstream.jobs.io.Tally;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
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
public final class DedupCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Mixin IoOptions io;

    @Mixin RunOptions console;

    @Option(
            names = "--expected-items",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "Distinct ids expected (per key with --key-field). Default ${DEFAULT-VALUE}.")
    long expectedItems = DedupConfig.DEFAULT_EXPECTED_ITEMS;

    @Option(
            names = "--fpp",
            paramLabel = "P",
            converter = Rates.Converter.class,
            description = "False-positive rate, e.g. 0.01 or 1%%. Default ${DEFAULT-VALUE}.")
    double fpp = DedupConfig.DEFAULT_FPP;

    @Mixin RecordFormat records;

    @Option(
            names = "--exact",
            description =
                    "Exact mode: keep the ids themselves behind the filter, which then only saves"
                            + " reads (a new id costs none). No first occurrence is ever dropped;"
                            + " state grows with the distinct ids (see docs/dedup.md).")
    boolean exact;

    @Option(
            names = "--pass-through",
            hidden = true,
            description =
                    "For benchmarks/command: the same read, parse and write without the dedup"
                            + " operator (every line is written).")
    boolean passThrough;

    @Option(
            names = "--retention",
            paramLabel = "DURATION",
            description =
                    "Forget ids after this long, e.g. 24h: in processing time, or in event time"
                            + " with --time-field.",
            converter = Durations.DurationConverter.class)
    Duration retention;

    @Option(
            names = "--time-field",
            paramLabel = "F",
            description =
                    "JSON: the event time field (epoch milliseconds, or ISO-8601 such as"
                            + " 2026-11-23T10:15:30Z); turns --retention to event time. Events"
                            + " without it, and late events (at or before the watermark: more"
                            + " than --max-out-of-orderness older than the newest time read"
                            + " before them), go to _rejected with the reason.")
    String timeField;

    @Option(
            names = "--max-out-of-orderness",
            paramLabel = "DURATION",
            description =
                    "With --time-field: how far behind the newest event time an event may arrive"
                            + " (the watermark's bound). Default 0.",
            converter = Durations.DurationConverter.class)
    Duration maxOutOfOrderness = Duration.ZERO;

    @Option(
            names = "--max-future-time",
            paramLabel = "DURATION",
            description =
                    "With --time-field: how far ahead of the wall clock an event time may be"
                            + " (default 1d). A later one (a time in microseconds, a corrupt"
                            + " field) goes to _rejected with the reason and never moves the"
                            + " watermark.",
            converter = Durations.DurationConverter.class)
    Duration maxFutureTime;

    /**
     * What the dedup pipeline needs, from the flags.
     *
     * @param parser reads the id as the first value (and, with a time field, the time as the
     *     second)
     * @param perKey one filter per key (the parser reads a key) instead of one over the stream
     * @param config the filters
     * @param timeField the event time field, or null for none
     * @param maxFutureTime how far ahead of the wall clock an event time may be (with a time field)
     * @param watermarks the input source's watermarks: none without a time field, else trailing the
     *     newest event time by {@code --max-out-of-orderness}; for files one after each record that
     *     moves it, so that a file's late events are the same on every run given the same times
     *     refused; times more than {@code maxFutureTime} ahead of the wall clock when read get no
     *     timestamp and never reach them (so the wall clock at read time decides too: a time near
     *     the bound may be admitted on one run and refused on a later one)
     */
    public record Settings(
            LineParser parser,
            boolean perKey,
            DedupConfig config,
            String timeField,
            Duration maxFutureTime,
            WatermarkStrategy<String> watermarks) {}

    /**
     * The checkpoint interval of {@code dedup --exact} when none is given: its state grows with the
     * distinct ids, and the heap backend writes all of it at every checkpoint (at 10^7 ids, 1 s
     * checkpoints made a run 103 s against 62 s at 10 s: benchmarks/results/issue-42.md).
     */
    static final Duration EXACT_CHECKPOINT_INTERVAL = Duration.ofSeconds(10);

    @Override
    public Integer call() throws Exception {
        if (exact) {
            io.execution.defaultCheckpointInterval = EXACT_CHECKPOINT_INTERVAL;
        }
        io.validate("dedup");
        StreamExecutionEnvironment env = io.environment(LocalMetrics.configuration(io.runId));
        Settings settings = settings();
        var input = io.source(env, "input", settings.watermarks());
        if (settings.timeField() != null && !io.kafka()) {
            // one reader, its files one after another: each dedup subtask then sees the records
            // and watermarks of one channel in the files' order, and lateness does not depend on
            // which reader got ahead (the parse step runs at the source's parallelism, chained)
            input.setParallelism(1);
        }
        if (passThrough && (io.keepsState() || io.kafka() || settings.timeField() != null)) {
            // a run that resumes a state directory without the dedup operator would drop its state
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--pass-through (for benchmarks) takes files alone: no --state-dir, Kafka or"
                            + " --time-field");
        }
        Outputs out = passThrough ? passThrough(input, settings) : pipeline(input, settings);
        io.writeOutput(out.records());
        io.writeRejected(out.rejected());
        RunOptions.Run run = console.execute(spec, io, env, "bloomstream dedup", stateSettings());
        if (!io.kafka()) {
            Commands.summary(
                    spec,
                    console,
                    run,
                    "first occurrences",
                    io.output,
                    health(run, settings.config(), !settings.perKey(), "ids"));
        }
        return 0;
    }

    /**
     * The options the state depends on, recorded in a {@code --state-dir}: a later run with other
     * values is refused.
     */
    java.util.Map<String, String> stateSettings() {
        return stateSettings(expectedItems, fpp, records, retention, timeField, exact);
    }

    /**
     * The settings a {@code --state-dir} of {@code dedup} records, from the flags' values: {@code
     * bootstrap --state-dir} writes the same, so that the dedup runs on its state check them.
     */
    static java.util.Map<String, String> stateSettings(
            long expectedItems,
            double fpp,
            RecordFormat records,
            Duration retention,
            String timeField,
            boolean exact) {
        java.util.Map<String, String> s = new java.util.LinkedHashMap<>();
        s.put("--expected-items", String.valueOf(expectedItems));
        s.put("--fpp", String.valueOf(fpp));
        records.record(s);
        s.put("--retention", retention == null ? null : retention.toString());
        s.put("--time-field", timeField);
        s.put("--exact", exact ? "true" : null);
        return s;
    }

    /**
     * The filters of the flags' values (retention in event time with a time field, else in
     * processing time); a bad value is a usage error.
     */
    static DedupConfig config(
            CommandLine.Model.CommandSpec spec,
            long expectedItems,
            double fpp,
            boolean exact,
            Duration retention,
            String timeField) {
        return Commands.config(
                spec,
                () -> {
                    DedupConfig.Builder b =
                            DedupConfig.builder()
                                    .expectedItems(expectedItems)
                                    .fpp(fpp)
                                    .exact(exact);
                    if (retention != null) {
                        b.retention(
                                retention,
                                timeField == null
                                        ? TimeDomain.PROCESSING_TIME
                                        : TimeDomain.EVENT_TIME);
                    }
                    return b.build();
                });
    }

    /** The id of a parsed record (its first value), as the dedup operator reads it. */
    static final IdSelector<Parsed> ID = IdSelector.ofString(p -> p.values[0]);

    /** The health of each dedup operator of a local run (none on a cluster). */
    static java.util.List<FilterHealth> health(
            RunOptions.Run run, DedupConfig config, boolean global, String what) {
        java.util.List<FilterHealth> health = new java.util.ArrayList<>();
        if (run.metrics != null) {
            for (LocalMetrics.DedupFigures f : run.metrics.dedupOperators()) {
                health.add(FilterHealth.dedup(f, config, global, what));
            }
        }
        return health;
    }

    /** The settings of the flags, checked: a bad combination is a usage error. */
    Settings settings() {
        if (timeField != null && retention == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--time-field needs --retention (event-time retention)");
        }
        if (timeField == null && !maxOutOfOrderness.isZero()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--max-out-of-orderness needs --time-field");
        }
        if (maxOutOfOrderness.isNegative()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--max-out-of-orderness must be >= 0, was " + maxOutOfOrderness);
        }
        if (timeField == null && maxFutureTime != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--max-future-time needs --time-field");
        }
        Duration future = maxFutureTime == null ? EventTimeBound.DEFAULT_MAX_AHEAD : maxFutureTime;
        if (future.isNegative()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--max-future-time must be >= 0, was " + EventTimes.text(future));
        }
        LineParser parser = timeField == null ? records.parser() : records.parser(timeField);
        DedupConfig config = config(spec, expectedItems, fpp, exact, retention, timeField);
        return new Settings(
                parser,
                records.keyed(),
                config,
                timeField,
                future,
                timeField == null
                        ? WatermarkStrategy.noWatermarks()
                        : EventTimes.watermarks(
                                records.format,
                                timeField,
                                maxOutOfOrderness,
                                !io.kafka(),
                                EventTimeBound.of(future)));
    }

    /**
     * The dedup job from input lines to its outputs: the first occurrence of each id, as the line
     * it came in, and the rejected lines: unparsable, without an id and, with a time field, without
     * a readable time or behind the watermark. With a time field, {@code lines} carry the
     * timestamps and watermarks of {@link Settings#watermarks()} (assigned in the source, so per
     * split).
     */
    public static Outputs pipeline(DataStream<String> lines, Settings settings) {
        String timeField = settings.timeField();
        SingleOutputStreamOperator<Parsed> parsed =
                lines.process(
                                timeField == null
                                        ? new Rejects(settings.parser(), true)
                                        : new Rejects(
                                                EventTimes.parser(
                                                        settings.parser(),
                                                        timeField,
                                                        settings.maxFutureTime())))
                        .returns(Parsed.TYPE)
                        .name("parse")
                        .uid("parse");
        if (timeField != null) {
            // forward from the source, records and watermarks in the order the source emits them
            parsed.setParallelism(lines.getParallelism());
        }
        SingleOutputStreamOperator<Parsed> firsts =
                dedup(parsed, settings.perKey(), settings.config());
        DataStream<String> records =
                firsts.map(p -> p.raw).returns(Types.STRING).name("raw").uid("raw");
        DataStream<String> rejected = parsed.getSideOutput(Rejects.TAG);
        if (timeField != null) {
            rejected =
                    rejected.union(
                            firsts.getSideOutput(BloomDedup.lateTag(Parsed.TYPE))
                                    .map(new Tally<>(Tally.REJECTED))
                                    .returns(Parsed.TYPE)
                                    .name("late-tally")
                                    .uid("late-tally")
                                    .map(p -> Rejects.json(EventTimes.LATE_REASON, p.raw))
                                    .returns(Types.STRING)
                                    .name("late")
                                    .uid("late"));
        }
        return new Outputs(records, rejected);
    }

    /**
     * The dedup job without its dedup operator: the lines that parse, as they came in, and the
     * rejected lines. What the command costs around the operator ({@code benchmarks/command}).
     */
    static Outputs passThrough(DataStream<String> lines, Settings settings) {
        SingleOutputStreamOperator<Parsed> parsed =
                lines.process(new Rejects(settings.parser(), true))
                        .returns(Parsed.TYPE)
                        .name("parse")
                        .uid("parse");
        return new Outputs(
                parsed.map(p -> p.raw).returns(Types.STRING).name("raw").uid("raw"),
                parsed.getSideOutput(Rejects.TAG));
    }

    /** First occurrences of {@code values[0]}, per key or over the whole stream. */
    private static SingleOutputStreamOperator<Parsed> dedup(
            DataStream<Parsed> parsed, boolean perKey, DedupConfig config) {
        return perKey
                ? BloomDedup.perKey(parsed.keyBy(p -> p.key, Types.STRING), ID, config)
                : BloomDedup.global(parsed, ID, config);
    }
}
