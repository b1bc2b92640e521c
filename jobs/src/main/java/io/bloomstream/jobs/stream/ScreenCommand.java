package io.bloomstream.jobs.stream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.screen.BloomScreen;
import io.bloomstream.flink.screen.FilterUpdate;
import io.bloomstream.flink.screen.ScreenConfig;
import io.bloomstream.flink.screen.ScreenMatch;
import io.bloomstream.jobs.console.FileErrors;
import io.bloomstream.jobs.console.FilterHealth;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.io.IoOptions;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rejects;
import io.bloomstream.jobs.io.Tally;
import io.bloomstream.jobs.io.Utf8LineFormat;
import io.bloomstream.jobs.io.Utf8Lines;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code screen}: splits a stream into clean and flagged records against a filter file. */
@Command(
        name = "screen",
        mixinStandardHelpOptions = true,
        description = {
            "Checks each record against a filter file built by build-filter: clean records to"
                    + " --output, flagged ones (with the field that matched) to --flagged-output,"
                    + " records missing a field or unparsable to OUTPUT/_rejected.",
            "Update commands (add ENTRY | remove ENTRY | load VERSION PATH, one a line) come"
                    + " from --updates FILE or, with Kafka, --control-topic. --updates FILE is read"
                    + " once, when the job starts, and never followed: lines added to it later are"
                    + " not seen; only --control-topic is live."
        })
public final class ScreenCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Mixin IoOptions io;

    @Mixin RunOptions console;

    @Option(
            names = "--filter",
            required = true,
            paramLabel = "FILTER",
            description = "The filter file (any Flink file system URI).")
    String filter;

    @Option(names = "--flagged-output", paramLabel = "DIR", description = "Flagged records.")
    String flaggedOutput;

    @Option(names = "--flagged-topic", paramLabel = "TOPIC", description = "Kafka: flagged.")
    String flaggedTopic;

    @Option(names = "--format", paramLabel = "FORMAT", description = "text (default) or json.")
    LineParser.Format format = LineParser.Format.TEXT;

    @Option(
            names = "--field",
            paramLabel = "F",
            description = "JSON: a field to screen (repeat for several; any match flags).")
    List<String> fields = new ArrayList<>();

    @Option(
            names = "--normalize",
            paramLabel = "MODE",
            description = "none, lowercase, email or domain (default: what the file records).")
    String normalize;

    @Option(
            names = "--filter-version",
            paramLabel = "V",
            description =
                    "Version of --filter (default ${DEFAULT-VALUE}). Restored from a savepoint, a"
                            + " job keeps the version in force unless this is higher.")
    long filterVersion = ScreenConfig.DEFAULT_INITIAL_VERSION;

    @Option(
            names = "--seed",
            paramLabel = "S",
            description = "XXH3 seed the filter was built with (build-filter --seed).")
    long seed = Hasher.DEFAULT_SEED;

    @Mixin io.bloomstream.jobs.tools.KeyOptions key;

    @Option(
            names = "--updates",
            paramLabel = "FILE",
            description = "Update commands, read once when the job starts (not followed).")
    String updates;

    @Option(names = "--control-topic", paramLabel = "TOPIC", description = "Kafka: commands.")
    String controlTopic;

    @Override
    public Integer call() throws Exception {
        io.declareOutput("flagged", flaggedOutput);
        io.validate("screen");
        if (io.kafka() ? flaggedTopic == null : flaggedOutput == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    io.kafka() ? "--flagged-topic is required" : "--flagged-output is required");
        }
        if (!io.kafka()) {
            String clash = Commands.overlap(io.output, flaggedOutput);
            if (clash != null) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--output "
                                + io.output
                                + " and --flagged-output "
                                + flaggedOutput
                                + " "
                                + clash
                                + ": the clean and flagged records would mix; give two separate"
                                + " directories");
            }
        }
        if (format == LineParser.Format.JSON && fields.isEmpty()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--format json needs --field");
        }
        requireReadable("--filter", filter);
        if (updates != null) {
            requireReadable("--updates", updates);
        }
        if (controlTopic != null && !io.kafka()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--control-topic needs --bootstrap-servers");
        }
        if (controlTopic != null && updates != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "give --updates or --control-topic, not both");
        }
        if (format == LineParser.Format.TEXT && !fields.isEmpty()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--field needs --format json");
        }
        String warning = updatesWarning(io.kafka(), updates);
        if (warning != null) {
            spec.commandLine().getErr().println("warning: " + warning);
            spec.commandLine().getErr().flush();
        }
        StreamExecutionEnvironment env = io.environment();
        Settings settings = settings();
        write(pipeline(io.source(env, "input"), updateLines(env), settings));
        java.util.Map<String, String> state = new java.util.LinkedHashMap<>();
        state.put("--format", format.name().toLowerCase(java.util.Locale.ROOT));
        state.put("--field", fields.isEmpty() ? null : String.join(",", fields));
        state.put("--seed", String.valueOf(seed));
        RunOptions.Run run = console.execute(spec, io, env, "bloomstream screen", state);
        if (!io.kafka()) {
            Commands.summary(
                    spec,
                    console,
                    run,
                    "clean records",
                    io.output,
                    health(filter, settings.config().hasher()),
                    summaryCounts(flaggedOutput, updates != null));
        }
        return 0;
    }

    /** Refuses a local file the job would fail on after the cluster had started. */
    private void requireReadable(String flag, String path) {
        String why = FileErrors.unreadableLocal(path);
        if (why != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), flag + " " + path + ": " + why);
        }
    }

    /** Accumulator of the records missing a screened field (rejected). */
    static final String MISSING_FIELD = "records-missing-field";

    /** Accumulator of the update commands rejected (not records: they are not in the input). */
    static final String COMMANDS_REJECTED = CountRejected.COMMANDS;

    /** The reason in {@code _rejected} of a record missing a screened field. */
    static final String MISSING_FIELD_REASON = "screened field missing";

    /**
     * The counts the summary adds after "rejected N", which counts every line of {@code _rejected}:
     * the flagged records, and of the rejected, those missing a screened field and (with {@code
     * --updates}) the bad update commands.
     */
    static String[] summaryCounts(String flaggedOutput, boolean updates) {
        List<String> more = new ArrayList<>();
        more.addAll(List.of("records-flagged", "flagged to " + flaggedOutput));
        more.addAll(List.of(MISSING_FIELD, "of the rejected missing a screened field"));
        if (updates) {
            more.addAll(List.of(COMMANDS_REJECTED, "of the rejected bad update commands"));
        }
        return more.toArray(String[]::new);
    }

    /**
     * What the screen pipeline needs, from the flags.
     *
     * @param parser reads the screened fields as the values (text: the line)
     * @param config the filter file, its version, seed and normalization, and the fields
     */
    public record Settings(LineParser parser, ScreenConfig<Parsed> config) {}

    /**
     * What the screen pipeline writes, for the caller's sinks.
     *
     * @param clean the records that matched no field, as they came in
     * @param flagged the flagged records as JSON (the field, the value that matched, the record)
     * @param rejected the rejected lines, records missing a screened field and bad update commands,
     *     as JSON with the reason
     */
    public record Screened(
            DataStream<String> clean, DataStream<String> flagged, DataStream<String> rejected) {}

    /** The settings of the flags; the normalization is the file's unless --normalize is given. */
    Settings settings() {
        Normalization normalization =
                normalize != null
                        ? Commands.config(spec, () -> Normalization.parse(normalize))
                        : recordedNormalization(filter);
        ScreenConfig.Builder<Parsed> config =
                ScreenConfig.<Parsed>builder()
                        .filterPath(filter)
                        .initialVersion(filterVersion)
                        .seed(seed)
                        .normalization(normalization);
        long[] k = key.keyWithoutSeed(spec.commandLine());
        if (k != null) {
            config.sipHashKey(k[0], k[1]);
        }
        if (format == LineParser.Format.TEXT) {
            config.field("line", p -> p.values[0]);
        } else {
            for (int i = 0; i < fields.size(); i++) {
                int index = i;
                config.field(fields.get(i), p -> p.values[index]);
            }
        }
        return new Settings(new LineParser(format, null, fields), config.build());
    }

    /**
     * The screen job from input lines and update lines ({@code add ENTRY}, {@code remove ENTRY},
     * {@code load VERSION PATH}; null for none) to its outputs. Counts the flagged records and
     * those missing a field in accumulators for the summary.
     */
    public static Screened pipeline(
            DataStream<String> lines, DataStream<String> updates, Settings settings) {
        SingleOutputStreamOperator<Parsed> parsed =
                lines.process(new Rejects(settings.parser(), false))
                        .returns(Parsed.TYPE)
                        .name("parse")
                        .uid("parse");
        SingleOutputStreamOperator<FilterUpdate> commands =
                updates == null
                        ? BloomScreen.noCommands(lines.getExecutionEnvironment())
                        : updates.process(new ParseCommand())
                                .returns(BloomScreen.commandType())
                                .setParallelism(1)
                                .name("parse-commands")
                                .uid("parse-commands");
        SingleOutputStreamOperator<Parsed> clean =
                BloomScreen.screen(parsed, commands, settings.config());
        DataStream<String> raw = clean.map(p -> p.raw).returns(Types.STRING).name("raw").uid("raw");
        DataStream<String> flagged =
                clean.getSideOutput(BloomScreen.flaggedTag(Parsed.TYPE))
                        .map(ScreenCommand::flaggedJson)
                        .returns(Types.STRING)
                        .name("flagged-json")
                        .uid("flagged-json")
                        .map(new Tally<>("records-flagged"))
                        .name("tally-flagged")
                        .uid("tally-flagged");
        DataStream<String> rejected =
                parsed.getSideOutput(Rejects.TAG)
                        .union(
                                clean.getSideOutput(BloomScreen.rejectedTag(Parsed.TYPE))
                                        .map(p -> Rejects.json(MISSING_FIELD_REASON, p.raw))
                                        .returns(Types.STRING)
                                        .name("missing-field")
                                        .uid("missing-field")
                                        .map(new Tally<>(MISSING_FIELD))
                                        .name("tally-missing")
                                        .uid("tally-missing")
                                        .map(new CountRejected(MISSING_FIELD_REASON))
                                        .name("tally-rejected-missing")
                                        .uid("tally-rejected-missing"),
                                commands.getSideOutput(Rejects.TAG)
                                        .map(new Tally<>(COMMANDS_REJECTED))
                                        .name("tally-commands")
                                        .uid("tally-commands")
                                        .map(new CountRejected(null))
                                        .name("tally-rejected-commands")
                                        .uid("tally-rejected-commands"));
        return new Screened(raw, flagged, rejected);
    }

    /** Writes the outputs to the flags' sinks. */
    void write(Screened out) {
        io.writeOutput(out.clean());
        io.writeTo(out.flagged(), "flagged", flaggedOutput, flaggedTopic, "flagged");
        io.writeRejected(out.rejected());
    }

    /**
     * What a run that reads a stream should know about {@code --updates}, or null: its file is read
     * once, when the job starts, since Flink's file source reads a file once and cannot follow one
     * that grows; a stream's live updates come from {@code --control-topic}.
     */
    static String updatesWarning(boolean kafka, String updates) {
        if (!kafka || updates == null) {
            return null;
        }
        return "--updates "
                + updates
                + " is read once, when the job starts, and never followed; for live updates,"
                + " use --control-topic";
    }

    /** The update lines of --control-topic or --updates, else null. */
    DataStream<String> updateLines(StreamExecutionEnvironment env) {
        if (controlTopic != null) {
            IoOptions control = new IoOptions();
            control.bootstrapServers = io.bootstrapServers;
            control.inputTopic = controlTopic;
            control.groupId = io.groupId + "-control";
            control.bounded = io.bounded;
            control.maxLineBytes = io.maxLineBytes;
            return control.source(env, "commands");
        }
        if (updates != null) {
            return env.fromSource(
                            FileSource.forRecordStreamFormat(
                                            new Utf8LineFormat(null, (int) io.maxLineBytes),
                                            new Path(updates))
                                    .build(),
                            WatermarkStrategy.noWatermarks(),
                            "commands")
                    .uid(io.fileSourceUid("commands"));
        }
        return null;
    }

    /** Parses commands; a bad one goes to the rejected output, never stops the job. */
    static final class ParseCommand extends ProcessFunction<String, FilterUpdate> {
        private static final long serialVersionUID = 1L;

        @Override
        public void processElement(String line, Context ctx, Collector<FilterUpdate> out) {
            if (line.isBlank() || line.startsWith("#")) {
                return; // comments and blank lines in command files
            }
            if (Utf8Lines.unreadable(line)) {
                ctx.output(Rejects.TAG, Rejects.json(Utf8Lines.reason(line), line));
                return;
            }
            try {
                out.collect(FilterUpdate.parse(line));
            } catch (IllegalArgumentException e) {
                ctx.output(Rejects.TAG, Rejects.json(e.getMessage(), line));
            }
        }
    }

    static String flaggedJson(ScreenMatch<Parsed> m) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("field", m.field);
            g.writeStringField("value", m.value);
            g.writeStringField("record", m.event.raw);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /**
     * The health of the filter file the screen started with (read again: the tasks' copies are not
     * reachable from here); none if it cannot be read now.
     */
    static java.util.List<FilterHealth> health(String file, Hasher hasher) {
        Path p = new Path(file);
        try {
            var fs = p.getFileSystem();
            long size = fs.getFileStatus(p).getLen();
            try (InputStream in = new java.io.BufferedInputStream(fs.open(p), 1 << 16)) {
                Hasher keyed = hasher.strategy().isKeyed() ? hasher : null;
                var f = FilterCodec.readFileStreaming(in, size, keyed).filter();
                return java.util.List.of(FilterHealth.screen(file, f, size));
            }
        } catch (IOException | RuntimeException e) {
            return java.util.List.of();
        }
    }

    /** The normalization a filter file's header records, else none. */
    private Normalization recordedNormalization(String file) {
        Path p = new Path(file);
        try (InputStream in = p.getFileSystem().open(p)) {
            Normalization recorded = FilterCodec.readNormalization(in);
            if (recorded != null) {
                return recorded;
            }
        } catch (IOException | IllegalArgumentException e) {
            // the operator reports a missing or bad file with its full diagnosis at start
        }
        return Normalization.NONE; // not recorded: the library API adds values as they are
    }
}
