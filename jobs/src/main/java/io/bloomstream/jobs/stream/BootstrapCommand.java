package io.bloomstream.jobs.stream;

import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupBootstrap;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.jobs.console.JobFailedException;
import io.bloomstream.jobs.console.Logs;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Durations;
import io.bloomstream.jobs.io.LineParser;
import io.bloomstream.jobs.io.Parsed;
import io.bloomstream.jobs.io.Rates;
import io.bloomstream.jobs.io.Rejects;
import io.bloomstream.jobs.io.StateDir;
import io.bloomstream.jobs.io.StateDirLock;
import io.bloomstream.jobs.io.Tally;
import io.bloomstream.jobs.io.Utf8LineFormat;
import io.bloomstream.jobs.io.Utf8Lines;
import io.bloomstream.jobs.tools.RowNumberSavepoint;
import io.bloomstream.jobs.tools.SavepointInspection;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bootstrap}: writes the dedup state of ids seen before, so that the next {@code dedup
 * --state-dir DIR} (or a job restored from the savepoint with the same uid and config) passes none
 * of them ({@link DedupBootstrap}).
 */
@Command(
        name = "bootstrap",
        mixinStandardHelpOptions = true,
        description = {
            "Writes the dedup state of the ids in --ids (or in a Flink SQL ROW_NUMBER dedup's"
                    + " savepoint: --from-savepoint), so that the next dedup passes none of them"
                    + " (new ids pass, dropped only as false positives, at most --fpp).",
            "--state-dir DIR: for 'bloomstream dedup --state-dir DIR' with the same flags."
                    + " --savepoint-dir DIR: a savepoint for 'flink run -s DIR' of a job with"
                    + " the same uid and config.",
            "Text input: the line is the id. JSON lines: --id-field, and --key-field for one filter"
                    + " per key, as dedup reads them."
        })
public final class BootstrapCommand implements Callable<Integer> {

    /** The default max parallelism: Flink's for jobs of parallelism up to 85. */
    static final int DEFAULT_MAX_PARALLELISM = 128;

    /** The accumulator of the distinct keys (per key). */
    static final String KEYS = "bootstrap-keys";

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    /** Where the ids come from: one of the two. */
    static final class Source {
        @Option(
                names = "--ids",
                required = true,
                paramLabel = "FILE",
                description =
                        "The ids seen before: a file or a directory of files, as dedup's --input.")
        String ids;

        @Option(
                names = "--from-savepoint",
                required = true,
                paramLabel = "PATH",
                description =
                        "The ids seen before: the keys of a Flink SQL ROW_NUMBER keep-first dedup"
                                + " (PARTITION BY the id) in a canonical savepoint of its job.")
        String fromSavepoint;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    @Option(
            names = "--uid-hash",
            paramLabel = "HASH",
            description =
                    "With --from-savepoint: the dedup operator's uid hash (32 hex digits), when"
                            + " the savepoint holds several (the error lists them).")
    String uidHash;

    @Option(
            names = "--state-ttl",
            paramLabel = "DURATION",
            converter = io.bloomstream.jobs.io.Durations.DurationConverter.class,
            description =
                    "With --from-savepoint: the SQL job's table.exec.state.ttl, if it had one"
                            + " (ids already expired under it are not carried).")
    java.time.Duration stateTtl;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    /** Where the state goes: one of the two. */
    static final class Target {
        @Option(
                names = "--state-dir",
                paramLabel = "DIR",
                description =
                        "A new (or empty) state directory for 'bloomstream dedup --state-dir DIR'"
                                + " with the same flags.")
        Path stateDir;

        @Option(
                names = "--savepoint-dir",
                paramLabel = "DIR",
                description =
                        "A new (or empty) directory for the savepoint, for 'flink run -s DIR'.")
        Path savepointDir;
    }

    @Option(
            names = "--expected-items",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "Distinct ids expected (per key with --key-field), the bootstrapped ones"
                            + " included. Default ${DEFAULT-VALUE}.")
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
            description = "Exact mode: the ids themselves behind the filter, as dedup --exact.")
    boolean exact;

    @Option(
            names = "--retention",
            paramLabel = "DURATION",
            description =
                    "Forget ids after this long, in processing time from now (as dedup"
                            + " --retention without --time-field).",
            converter = Durations.DurationConverter.class)
    Duration retention;

    @Option(names = "--time-field", hidden = true, paramLabel = "F")
    String timeField;

    @Option(
            names = "--max-parallelism",
            paramLabel = "N",
            description =
                    "The savepoint's max parallelism (key groups); the job restored from it must"
                            + " have the same, or none set. Default ${DEFAULT-VALUE}.")
    int maxParallelism = DEFAULT_MAX_PARALLELISM;

    @Option(
            names = "--uid",
            paramLabel = "UID",
            description = "The dedup operator's uid. Default ${DEFAULT-VALUE}.")
    String uid = BloomDedup.DEFAULT_UID;

    @Option(
            names = "--verbose",
            description = "Flink's log on the console (stderr) instead of a log file.")
    boolean verbose;

    @Option(names = "--log-file", paramLabel = "FILE", description = "Where Flink's log goes.")
    Path logFile;

    @Override
    public Integer call() throws Exception {
        if (timeField != null) {
            throw usage(
                    "bootstrap takes no --time-field: event-time retention judges each id by its"
                            + " time against a watermark, which a bootstrap has no value for");
        }
        if (maxParallelism < 1 || maxParallelism > 32768) {
            throw usage("--max-parallelism must be in [1, 32768], was " + maxParallelism);
        }
        LineParser parser = records.parser();
        DedupConfig config =
                DedupCommand.config(spec, expectedItems, fpp, exact, retention, timeField);
        if (source.fromSavepoint == null) {
            if (!Files.exists(Path.of(source.ids))) {
                throw usage("--ids " + source.ids + " does not exist");
            }
            if (uidHash != null || stateTtl != null) {
                throw usage("--uid-hash and --state-ttl go with --from-savepoint");
            }
        } else {
            if (records.format != LineParser.Format.TEXT) {
                throw usage(
                        "--from-savepoint reads a ROW_NUMBER dedup's ids (PARTITION BY the id):"
                                + " it takes no --format json, --id-field or --key-field");
            }
            try {
                SavepointInspection.requireSavepoint("--from-savepoint", source.fromSavepoint);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
        }
        if (target.savepointDir != null) {
            Path dir = target.savepointDir.toAbsolutePath().normalize();
            if (!isNewOrEmpty(dir)) {
                throw usage(
                        "--savepoint-dir "
                                + target.savepointDir
                                + " is not empty: give a new or empty directory");
            }
            run(parser, config, dir);
            next("flink run -s " + dir + " with a job of uid " + uid + " and the same config");
            return 0;
        }
        if (!uid.equals(BloomDedup.DEFAULT_UID)) {
            throw usage(
                    "--uid: dedup --state-dir runs its operator with uid "
                            + BloomDedup.DEFAULT_UID
                            + "; give --uid with --savepoint-dir");
        }
        Map<String, String> settings =
                DedupCommand.stateSettings(
                        expectedItems, fpp, records, retention, timeField, exact);
        try (StateDirLock lock = StateDirLock.take(target.stateDir)) {
            StateDir state = StateDir.open(target.stateDir, "dedup", settings);
            if (state.latest().isPresent()) {
                throw usage(
                        "--state-dir "
                                + target.stateDir
                                + " already holds dedup state: a bootstrap would replace it."
                                + " Give a new (or empty) directory");
            }
            run(parser, config, state.savepoints().resolve("bootstrap"));
            StringBuilder next = new StringBuilder("bloomstream dedup --state-dir ");
            next.append(target.stateDir);
            settings.forEach(
                    (flag, value) -> {
                        if (value != null && !(flag.equals("--format") && value.equals("text"))) {
                            next.append(' ').append(flag);
                            if (!flag.equals("--exact")) {
                                next.append(' ').append(value);
                            }
                        }
                    });
            next("" + next.append(" --input FILE --output DIR"));
        } catch (StateDir.RefusedException e) {
            throw usage(e.getMessage());
        }
        return 0;
    }

    /** Runs the bootstrap job into {@code savepoint} and prints what it read and wrote. */
    private void run(LineParser parser, DedupConfig config, Path savepoint) throws Exception {
        Path log = Logs.configure(spec.name(), verbose, logFile);
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        conf.set(PipelineOptions.GENERIC_TYPES, true); // the State Processor API's records
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        SingleOutputStreamOperator<Parsed> parsed;
        if (source.fromSavepoint != null) {
            parsed = fromSavepoint(env);
        } else {
            FileSource<String> files =
                    FileSource.forRecordStreamFormat(
                                    new Utf8LineFormat(
                                            null, (int) Utf8Lines.DEFAULT_MAX_LINE_BYTES),
                                    new org.apache.flink.core.fs.Path(source.ids))
                            .build();
            parsed =
                    env.fromSource(files, WatermarkStrategy.noWatermarks(), "ids")
                            .process(new Rejects(parser, true))
                            .returns(Parsed.TYPE)
                            .name("parse");
        }
        StateBootstrapTransformation<Parsed> dedup =
                records.keyed()
                        ? DedupBootstrap.perKey(
                                parsed, p -> p.key, Types.STRING, DedupCommand.ID, config)
                        : DedupBootstrap.global(parsed, DedupCommand.ID, config);
        SavepointWriter.newSavepoint(env, new HashMapStateBackend(), maxParallelism)
                .withOperator(OperatorIdentifier.forUid(uid), dedup)
                .write(savepoint.toUri().toString());
        if (records.keyed()) {
            parsed.keyBy(p -> p.key, Types.STRING)
                    .process(new DistinctKeys())
                    .returns(Types.VOID)
                    .name("keys")
                    .sinkTo(new DiscardingSink<>());
        }
        JobExecutionResult result;
        try {
            result = env.execute("bloomstream bootstrap");
        } catch (Exception e) {
            StateDir.deleteRecursively(savepoint);
            throw JobFailedException.of("job failed: " + JobFailedException.rootCause(e), e, log);
        }
        long read = Tally.total(result, Tally.IN);
        long rejected = Tally.total(result, Tally.REJECTED);
        PrintWriter err = spec.commandLine().getErr();
        if (rejected > 0) {
            err.printf(
                    Locale.ROOT,
                    "warning: %d of %d lines could not be parsed: not bootstrapped%n",
                    rejected,
                    read);
        }
        if (read == rejected) {
            StateDir.deleteRecursively(savepoint);
            throw JobFailedException.of(
                    "no id to bootstrap: " + read + " lines read, none parsed", null, log);
        }
        int subtasks = subtaskStates(savepoint, uid);
        if (subtasks != env.getParallelism()) {
            // the State Processor API's task thread can fail without failing the job
            StateDir.deleteRecursively(savepoint);
            throw JobFailedException.of(
                    "the bootstrap wrote the state of "
                            + subtasks
                            + " of its "
                            + env.getParallelism()
                            + " subtasks for uid "
                            + uid
                            + " (see Flink's log)",
                    null,
                    log);
        }
        err.printf(
                Locale.ROOT,
                "read %d ids%s; %s; wrote the state of uid %s (max parallelism %d) to %s (%d ms)%n",
                read - rejected,
                rejected > 0 ? " (" + rejected + " lines rejected)" : "",
                records.keyed()
                        ? Tally.total(result, KEYS) + " keys"
                        : config.shards() + " shards (global)",
                uid,
                maxParallelism,
                savepoint,
                result.getNetRuntime());
        if (log != null) {
            err.println("Flink's log: " + log);
        }
    }

    /**
     * The ids of a SQL {@code ROW_NUMBER} keep-first dedup's savepoint ({@link
     * RowNumberSavepoint}), as parsed text lines, counted as read.
     */
    private SingleOutputStreamOperator<Parsed> fromSavepoint(StreamExecutionEnvironment env)
            throws java.io.IOException {
        RowNumberSavepoint.Builder reader = RowNumberSavepoint.reader(source.fromSavepoint);
        if (uidHash != null) {
            reader.uidHash(uidHash);
        }
        if (stateTtl != null) {
            reader.stateTtl(stateTtl);
        }
        return reader.readIds(env)
                .map(id -> new Parsed(id, null, new String[] {id}))
                .returns(Parsed.TYPE)
                .name("ids")
                .map(new Tally<>(Tally.IN))
                .returns(Parsed.TYPE)
                .name("count");
    }

    /** The subtask states of the operator {@code uid} in the savepoint at {@code dir}. */
    static int subtaskStates(Path dir, String uid) throws java.io.IOException {
        try (java.io.DataInputStream in =
                new java.io.DataInputStream(Files.newInputStream(dir.resolve("_metadata")))) {
            var metadata =
                    Checkpoints.loadCheckpointMetadata(
                            in, BootstrapCommand.class.getClassLoader(), dir.toString());
            var id = OperatorIdentifier.forUid(uid).getOperatorId();
            return metadata.getOperatorStates().stream()
                    .filter(o -> o.getOperatorID().equals(id))
                    .mapToInt(o -> o.getSubtaskStates().size())
                    .sum();
        }
    }

    /** Counts the distinct keys into the accumulator {@value #KEYS}; emits nothing. */
    static final class DistinctKeys extends KeyedProcessFunction<String, Parsed, Void> {
        private static final long serialVersionUID = 1L;
        private transient ValueState<Boolean> seen;
        private transient LongCounter keys;

        @Override
        public void open(OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
            keys = getRuntimeContext().getLongCounter(KEYS);
        }

        @Override
        public void processElement(Parsed record, Context ctx, Collector<Void> out)
                throws Exception {
            if (seen.value() == null) {
                seen.update(true);
                keys.add(1);
            }
        }
    }

    private void next(String command) {
        spec.commandLine().getErr().println("next: " + command);
        spec.commandLine().getErr().flush();
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private static boolean isNewOrEmpty(Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return true;
        }
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }
}
