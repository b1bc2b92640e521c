package io.bloomstream.jobs.stream;

import io.bloomstream.jobs.Main;
import io.bloomstream.testing.FailOnce;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;

/**
 * Builds the jobs' own pipelines, with the settings, sources and sinks of real command lines, for
 * the Kafka ITs.
 */
final class KafkaJobs {

    private KafkaJobs() {}

    /** The command object of {@code args}, parsed and validated as the CLI would. */
    @SuppressWarnings("unchecked")
    static <C extends Callable<Integer>> C command(String... args) {
        CommandLine cl = Main.commandLine();
        CommandLine.ParseResult parsed = cl.parseArgs(args);
        C c = (C) parsed.subcommand().commandSpec().userObject();
        return c;
    }

    /**
     * A map between the source and the pipeline that fails once, {@code after} lines past the first
     * completed checkpoint (armed by {@link FailOnce#reset}).
     */
    static UnaryOperator<DataStream<String>> failOnce(long after) {
        return lines ->
                lines.map(new FailOnce<String>(after))
                        .returns(Types.STRING)
                        .name("fail-once")
                        .uid("fail-once");
    }

    /** A local environment: Kryo off, checkpoints every 200 ms, two restarts, maybe a savepoint. */
    static StreamExecutionEnvironment environment(Path savepoint) {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint.toString());
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(200);
        return env;
    }

    /** Waits until {@code done} while the job runs; fails if it ends or 120 s pass. */
    static void await(JobClient client, String what, BooleanSupplier done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                client.cancel().get();
                throw new AssertionError(what + ": not reached in 120 s");
            }
            if (client.getJobStatus().get().isGloballyTerminalState()) {
                throw new AssertionError(
                        "job ended before " + what + ": " + client.getJobStatus().get());
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling a condition, with a deadline
        }
    }

    /** Stops the job with a savepoint in {@code dir}; returns its path. */
    static Path savepoint(JobClient client, Path dir) throws Exception {
        String path =
                client.stopWithSavepoint(
                                false, dir.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(120, TimeUnit.SECONDS);
        return Path.of(java.net.URI.create(path));
    }
}
