package io.bloomstream.jobs.io;

import io.bloomstream.jobs.console.FileErrors;
import java.util.List;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Where a stream command reads and writes: files (a file or directory of lines in, part files out,
 * exactly once through Flink's FileSink) or, with {@code --bootstrap-servers}, Kafka topics
 * (transactional sink, exactly once). Also the execution options shared by every stream command.
 */
public final class IoOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--input",
            paramLabel = "PATH",
            description = "A file or directory of lines (any Flink file system URI).")
    public String input;

    @Option(
            names = "--output",
            paramLabel = "DIR",
            description = "Output directory (part files). Rejected records go to DIR/_rejected.")
    public String output;

    @Option(
            names = "--bootstrap-servers",
            paramLabel = "HOSTS",
            description = "Read and write Kafka instead of files.")
    public String bootstrapServers;

    @Option(names = "--input-topic", paramLabel = "TOPIC", description = "Kafka input topic.")
    public String inputTopic;

    @Option(names = "--output-topic", paramLabel = "TOPIC", description = "Kafka output topic.")
    public String outputTopic;

    @Option(
            names = "--dead-letter-topic",
            paramLabel = "TOPIC",
            description = "Kafka topic of rejected records (default OUTPUT_TOPIC-rejected).")
    public String deadLetterTopic;

    @Option(
            names = "--group-id",
            paramLabel = "ID",
            description = "Kafka consumer group (default bloomstream-COMMAND).")
    public String groupId;

    @Option(
            names = "--bounded",
            description = "Kafka: stop at the offsets that are latest when the job starts.")
    public boolean bounded;

    @Option(
            names = "--state-dir",
            paramLabel = "DIR",
            description =
                    "Locally: keep the job's state in DIR, and resume from it: a later run with the"
                            + " same DIR remembers what this one saw (file input: the next file;"
                            + " Kafka: after a stop). A file run stops with its state saved at the"
                            + " end of its input, any run on Ctrl-C. Refused for another command"
                            + " or other settings (named). Delete DIR to start over.")
    public java.nio.file.Path stateDir;

    @Option(
            names = ResumedInput.NEW_INPUT_FLAG,
            description =
                    "With --state-dir, after a run that was killed before it finished its input:"
                            + " read --input from its start as a new input, instead of reading on"
                            + " where the killed run's last checkpoint left its input (a run"
                            + " without it is refused when the input, its files or the outputs"
                            + " differ from the killed run's).")
    public boolean newInput;

    @Option(
            names = "--max-line-bytes",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "The longest line (file) or record (Kafka) read, in bytes (default 1048576,"
                            + " 1 MiB); a longer one goes to the rejected output with its length"
                            + " and its first 1024 bytes. A file line is never read into memory"
                            + " whole; a Kafka record is (the consumer hands it over whole: bound"
                            + " it with the topic's max.message.bytes).")
    public long maxLineBytes = Utf8Lines.DEFAULT_MAX_LINE_BYTES;

    @Option(
            names = "--append",
            description =
                    "File output: add this run's part files to a non-empty --output (else refused,"
                            + " unless the run resumes the --state-dir that wrote it).")
    public boolean append;

    /**
     * The file output directories of the job by flag: {@code --output}, and those of {@link
     * #sink(String, String, String)} ({@code --ID-output}); none with Kafka.
     */
    public java.util.Map<String, String> fileOutputs() {
        java.util.Map<String, String> dirs = new java.util.LinkedHashMap<>();
        if (!kafka()) {
            dirs.put("--output", output);
            dirs.putAll(otherOutputs);
        }
        return dirs;
    }

    private final java.util.Map<String, String> otherOutputs = new java.util.LinkedHashMap<>();

    /** --parallelism, --checkpoint-interval, --web-ui: how the job runs. */
    @CommandLine.Mixin public ExecutionOptions execution = new ExecutionOptions();

    /** Checks that exactly one of files and Kafka is configured, with what it needs. */
    public void validate(String command) {
        if (bootstrapServers == null) {
            require(input != null, "--input is required (or --bootstrap-servers)");
            require(output != null, "--output is required");
            require(inputTopic == null && outputTopic == null, "topics need --bootstrap-servers");
        } else {
            require(inputTopic != null, "--input-topic is required with --bootstrap-servers");
            require(outputTopic != null, "--output-topic is required with --bootstrap-servers");
            require(input == null && output == null, "give files or Kafka, not both");
        }
        if (input != null) {
            requireFileOrDirectory(input);
        }
        if (groupId == null) {
            groupId = "bloomstream-" + command;
        }
        try {
            Utf8Lines.checkCap(maxLineBytes);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        execution.validate(spec.commandLine());
        // The Kafka source keeps each partition's end offset in its state: a resumed bounded run
        // would stop at the end of the run that saved it (or never, after an unbounded one).
        require(
                !(bounded && stateDir != null),
                "--bounded cannot resume from --state-dir (the Kafka source's state keeps each"
                        + " partition's end offset, so a resumed run would stop at the old end);"
                        + " run without --bounded and stop with Ctrl-C");
        require(!newInput || stateDir != null, ResumedInput.NEW_INPUT_FLAG + " needs --state-dir");
        if (stateDir != null) {
            execution.checkpointDir = stateDir.toAbsolutePath().normalize().resolve("checkpoints");
            if (!kafka()) {
                inputDecision = decideInput();
            }
        }
    }

    /**
     * How the file source of a run on the state directory reads its input ({@link ResumedInput}):
     * refused as a usage error. Decided before the job is built (the source's uid depends on it);
     * {@code RunOptions} decides again once it holds the directory's lock, and refuses a run whose
     * directory changed meanwhile.
     */
    public ResumedInput.Decision decideInput() {
        try {
            return ResumedInput.decide(
                    stateDir, input, List.copyOf(fileOutputs().values()), newInput, runId);
        } catch (ResumedInput.RefusedException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * With a state directory and file input, how this run's source reads its input (decided in
     * {@link #validate}); null otherwise.
     */
    public ResumedInput.Decision inputDecision;

    /**
     * The scope of the summary's counts kept in checkpoints ({@link RunCounts#SCOPE}): the file
     * source's id, so that a recovery counts on from the killed run's checkpoint and a new input
     * counts from zero; for Kafka (and runs without a state directory) this run's id.
     */
    public String countScope() {
        return inputDecision != null ? inputDecision.sourceId() : runId;
    }

    /**
     * Whether the run keeps its state in a {@code --state-dir}: then a file input does not end the
     * job ({@link HoldAtEnd}), the command stops it with a savepoint, and each file source is a new
     * one (see {@link #fileSourceUid}).
     */
    public boolean keepsState() {
        return stateDir != null;
    }

    /**
     * The uid of a file source named {@code name}: with a state directory, one per input ({@link
     * ResumedInput}): a new one for a new input, so that the run reads the whole of its files (a
     * new day's file, or the same path again) and the last input's source state (its splits and
     * positions) is not restored (the restore ignores it); the killed run's after a crash, so that
     * the recovery reads on where its checkpoint left the input. Otherwise {@code name}.
     */
    public String fileSourceUid(String name) {
        if (!keepsState()) {
            return name;
        }
        return name + "-" + (inputDecision != null ? inputDecision.sourceId() : runId);
    }

    /**
     * The uid of a sink named {@code name} writing to directory {@code dir}: with a state directory
     * and file output, one per output directory. Flink's FileSink restores its open buckets with
     * the directory they were written in, so a run resumed with another {@code --output} would
     * write into the last run's directory; with a uid per directory its state is restored only into
     * a run writing to the same directory (a rerun after a crash, whose files pending commit it
     * then commits). Otherwise (Kafka, no state directory) {@code name}.
     */
    public String fileSinkUid(String name, String dir) {
        if (!keepsState() || kafka() || dir == null) {
            return name;
        }
        java.net.URI uri = new Path(dir).toUri();
        String where =
                uri.getScheme() == null || "file".equals(uri.getScheme())
                        ? java.nio.file.Path.of(uri.getPath())
                                .toAbsolutePath()
                                .normalize()
                                .toString()
                        : uri.normalize().toString();
        return name + "-" + Integer.toHexString(where.hashCode());
    }

    /**
     * Refuses a local {@code --input} that exists but is neither a file nor a directory: a pipe
     * ({@code /dev/stdin}, {@code <(zcat ...)}, a FIFO), which Flink's file source cannot read (it
     * seeks, and reads a split more than once on recovery).
     */
    private void requireFileOrDirectory(String path) {
        java.net.URI uri = new Path(path).toUri();
        if (uri.getScheme() != null && !"file".equals(uri.getScheme())) {
            return;
        }
        java.nio.file.Path local = java.nio.file.Path.of(uri.getPath());
        require(
                !java.nio.file.Files.exists(local)
                        || java.nio.file.Files.isRegularFile(local)
                        || java.nio.file.Files.isDirectory(local),
                "--input "
                        + path
                        + " is not a file or directory (a pipe?): Flink's file source seeks in"
                        + " its files and reads them again after a failure; write the stream to a"
                        + " file first, or send it through Kafka (--bootstrap-servers)");
    }

    /**
     * Refuses a missing or unreadable local {@code --input}, naming it: the job failed on it only
     * after the cluster had started. Called last, before the job runs, so that the command's other
     * usage errors come first.
     */
    public void requireInput() {
        if (!kafka() && input != null) {
            String why = FileErrors.unreadableLocal(input);
            // a directory is an input too: its files
            require(
                    why == null || why.startsWith("is a directory"),
                    "--input " + input + ": " + why);
        }
    }

    private void require(boolean ok, String message) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), message);
        }
    }

    /** Whether the command runs between Kafka topics. */
    public boolean kafka() {
        return bootstrapServers != null;
    }

    /** A new id per command line: keys the progress counters and metrics of a local run. */
    public final String runId = java.util.UUID.randomUUID().toString();

    /** {@link #environment(Configuration)} with nothing added for local runs. */
    public StreamExecutionEnvironment environment() {
        return environment(new Configuration());
    }

    /**
     * The execution environment: see {@link ExecutionOptions#environment(Configuration)}, with
     * object reuse on: the commands' functions keep no record they are handed (the dedup operator
     * copies the keys of its bundles), so a chained operator gets the record itself instead of a
     * copy of it.
     */
    public StreamExecutionEnvironment environment(Configuration localOnly) {
        StreamExecutionEnvironment env = execution.environment(localOnly);
        env.getConfig().enableObjectReuse();
        Configuration parameters = new Configuration();
        parameters.setString(RunCounts.SCOPE, countScope());
        env.getConfig().setGlobalJobParameters(parameters);
        return env;
    }

    /** The input lines. */
    public DataStream<String> source(StreamExecutionEnvironment env, String name) {
        return source(env, name, WatermarkStrategy.noWatermarks());
    }

    /**
     * The input with event time: {@code watermarks} runs in the source, so watermarks are per split
     * (file or partition), not per reader, and do not depend on the order splits are read.
     */
    public DataStreamSource<String> source(
            StreamExecutionEnvironment env, String name, WatermarkStrategy<String> watermarks) {
        if (kafka()) {
            var builder =
                    KafkaSource.<String>builder()
                            .setBootstrapServers(bootstrapServers)
                            .setTopics(inputTopic)
                            .setGroupId(groupId)
                            // the group's committed offsets, else the beginning: a restart
                            // without a savepoint does not replay what was already processed
                            .setStartingOffsets(
                                    OffsetsInitializer.committedOffsets(
                                            org.apache.kafka.clients.consumer.OffsetResetStrategy
                                                    .EARLIEST))
                            .setValueOnlyDeserializer(
                                    new Utf8Lines(
                                            execution.local ? runId : null, (int) maxLineBytes))
                            .setProperty("isolation.level", "read_committed");
            if (bounded) {
                builder.setBounded(OffsetsInitializer.latest());
            }
            DataStreamSource<String> kafka = env.fromSource(builder.build(), watermarks, name);
            // the same uid on every run: the offsets are restored with the rest of the state
            kafka.uid(name);
            return kafka;
        }
        FileSource<String> files =
                FileSource.forRecordStreamFormat(
                                new Utf8LineFormat(
                                        execution.local ? runId : null, (int) maxLineBytes),
                                new Path(input))
                        .build();
        DataStreamSource<String> source =
                keepsState()
                        ? env.fromSource(
                                new HoldAtEnd<>(files, runId),
                                watermarks,
                                name,
                                org.apache.flink.api.common.typeinfo.Types.STRING)
                        : env.fromSource(files, watermarks, name);
        source.uid(fileSourceUid(name));
        return source;
    }

    /** Counts the main output (accumulator {@link Tally#OUT}) and writes it. */
    public void writeOutput(DataStream<String> records) {
        write(
                records.map(new Tally<>(Tally.OUT)).name("tally").uid("tally"),
                "output",
                output,
                outputTopic,
                "out");
    }

    /** Writes rejected records to the rejected output (dead-letter topic). */
    public void writeRejected(DataStream<String> records) {
        write(
                records,
                "rejected",
                output + "/_rejected",
                deadLetterTopic != null ? deadLetterTopic : outputTopic + "-rejected",
                "dlq");
    }

    /**
     * Declares another file output, the directory {@code dir} of the flag {@code --ID-output},
     * before {@link #validate} (which checks a recovery's outputs against the killed run's); {@link
     * #writeTo} then writes it.
     */
    public void declareOutput(String id, String dir) {
        if (!kafka() && dir != null) {
            otherOutputs.put("--" + id + "-output", dir);
        }
    }

    /**
     * Writes {@code records} to another output, named {@code name}: the directory {@code dir} given
     * by the flag {@code --ID-output} (declared with {@link #declareOutput}), or the Kafka topic
     * {@code topic}.
     */
    public void writeTo(
            DataStream<String> records, String name, String dir, String topic, String id) {
        declareOutput(id, dir);
        write(records, name, dir, topic, id);
    }

    /**
     * Writes to a Kafka topic, or to part files directly under {@code dir} through {@link
     * LineBlocks} (the sink writes a block of lines at a time), made visible (renamed from
     * in-progress) at the checkpoint after they roll and at the end of a bounded job.
     */
    private void write(
            DataStream<String> records, String name, String dir, String topic, String id) {
        if (kafka()) {
            records.sinkTo(kafkaSink(topic, id)).name(name).uid(name);
            return;
        }
        records.transform(
                        name + "-blocks",
                        PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO,
                        new LineBlocks())
                .uid(name + "-blocks")
                .sinkTo(fileSinkOf(dir))
                .name(name)
                .uid(fileSinkUid(name, dir));
    }

    /**
     * The file sink of blocks of lines; with a state directory, part files roll at every
     * checkpoint, so that none is left in progress when the run stops with a savepoint (the
     * savepoint commits them) and the state holds no open file for the next run to resume.
     */
    private Sink<byte[]> fileSinkOf(String dir) {
        var files =
                FileSink.forRowFormat(new Path(dir), new LineBlocks.BlockEncoder())
                        .withBucketAssigner(new BasePathBucketAssigner<>())
                        .withOutputFileConfig(
                                OutputFileConfig.builder().withPartSuffix(".txt").build());
        return keepsState()
                ? files.withRollingPolicy(OnCheckpointRollingPolicy.build()).build()
                : files.build();
    }

    private Sink<String> kafkaSink(String topic, String id) {
        return KafkaSink.<String>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(
                        KafkaRecordSerializationSchema.builder()
                                .setTopic(topic)
                                .setValueSerializationSchema(new SimpleStringSchema())
                                .build())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(groupId + "-" + id)
                .build();
    }
}
