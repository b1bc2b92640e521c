package io.bloomstream.jobs.io;

import java.time.Duration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How a command's jobs run: parallelism, checkpoint interval, and locally the web UI and where
 * checkpoints go. Shared by the stream commands (through {@link IoOptions}) and {@code sql}.
 *
 * <p>A local run checkpoints to the file system: into {@link #checkpointDir} if a command sets it
 * ({@code --state-dir}), else into a new temporary directory that {@link #cleanUp} deletes. Flink's
 * default for a local environment, the JobManager's memory, fails every checkpoint of more than 5
 * MiB, and after it the job.
 */
public final class ExecutionOptions {

    @Option(
            names = "--parallelism",
            paramLabel = "P",
            description = "Job parallelism (default: the cluster's, or 2 locally).")
    public Integer parallelism;

    @Option(
            names = "--checkpoint-interval",
            paramLabel = "DURATION",
            description =
                    "Checkpoint interval, e.g. 1s, 30s (default: 1s for the stream commands, 10s"
                            + " for dedup --exact, 30s for sql).",
            converter = Durations.DurationConverter.class)
    public Duration checkpointInterval;

    /** The checkpoint interval when {@code --checkpoint-interval} is not given. */
    public Duration defaultCheckpointInterval = Duration.ofSeconds(1);

    /**
     * Locally: the directory of the job's checkpoints, set by the command before {@link
     * #environment}; null for a temporary one.
     */
    public java.nio.file.Path checkpointDir;

    /** The temporary checkpoint directory of a local run, deleted by {@link #cleanUp}, or null. */
    private java.nio.file.Path temporaryCheckpointDir;

    @Option(
            names = "--web-ui",
            description =
                    "Locally: serve Flink's web UI on the first free port from 8081 (printed at"
                            + " the start).")
    public boolean webUi;

    /** Checks the values, reporting a bad one as a usage error of {@code commandLine}. */
    public void validate(CommandLine commandLine) {
        if (parallelism != null && parallelism < 1) {
            throw new CommandLine.ParameterException(
                    commandLine, "--parallelism must be >= 1, was " + parallelism);
        }
        if (checkpointInterval != null
                && (checkpointInterval.isNegative() || checkpointInterval.isZero())) {
            throw new CommandLine.ParameterException(
                    commandLine,
                    "--checkpoint-interval must be positive, was " + checkpointInterval);
        }
    }

    /** Whether {@link #environment} made an embedded mini-cluster (not {@code flink run}). */
    public boolean local;

    /** The port of the local web UI ({@code --web-ui}), else -1. */
    public int webUiPort = -1;

    /** The first port in [from, to] that nothing listens on. */
    private static int freePort(int from, int to) {
        for (int port = from; port <= to; port++) {
            try (java.net.ServerSocket s = new java.net.ServerSocket(port)) {
                return port;
            } catch (java.io.IOException taken) {
                // next
            }
        }
        throw new IllegalStateException("--web-ui: no free port in " + from + ".." + to);
    }

    /** {@link #environment(Configuration)} with nothing added for local runs. */
    public StreamExecutionEnvironment environment() {
        return environment(new Configuration());
    }

    /**
     * The execution environment: the cluster's under {@code flink run}, else an embedded
     * mini-cluster (with the web UI if asked) configured with {@code localOnly} too (a metric
     * reporter, say). Kryo is off, checkpointing on.
     */
    public StreamExecutionEnvironment environment(Configuration localOnly) {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        local = env instanceof LocalStreamEnvironment;
        if (local) {
            conf.addAll(localOnly);
            java.nio.file.Path checkpoints = checkpointDir;
            if (checkpoints == null) {
                try {
                    checkpoints =
                            java.nio.file.Files.createTempDirectory("bloomstream-checkpoints-");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(
                            "cannot create a temporary checkpoint directory", e);
                }
                temporaryCheckpointDir = checkpoints;
            }
            conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
            conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
            if (webUi) {
                webUiPort = freePort(8081, 8181);
                conf.set(RestOptions.BIND_PORT, String.valueOf(webUiPort));
                // the dashboard's metrics every second instead of every ten
                conf.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofSeconds(1));
                env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
            } else {
                env = StreamExecutionEnvironment.createLocalEnvironment(conf);
            }
        }
        if (parallelism != null) {
            env.setParallelism(parallelism);
        } else if (local) {
            env.setParallelism(2);
        }
        if (local) {
            // Fail fast on a laptop instead of Flink's endless restarts under checkpointing; on a
            // cluster the cluster's restart strategy applies.
            Configuration restart = new Configuration();
            restart.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            restart.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
            restart.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY,
                    Duration.ofSeconds(1));
            env.configure(restart);
        }
        env.enableCheckpointing(
                (checkpointInterval != null ? checkpointInterval : defaultCheckpointInterval)
                        .toMillis());
        return env;
    }

    /** Deletes the temporary checkpoint directory of a local run, if any. */
    public void cleanUp() {
        if (temporaryCheckpointDir != null) {
            try {
                StateDir.deleteRecursively(temporaryCheckpointDir);
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                // a temporary directory: the system cleans it up eventually
            }
            temporaryCheckpointDir = null;
        }
    }
}
