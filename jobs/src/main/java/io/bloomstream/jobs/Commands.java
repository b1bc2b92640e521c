package io.bloomstream.jobs;

import java.util.function.Supplier;
import picocli.CommandLine;

/** Checks shared by the stream commands, reported as usage errors (exit status 2). */
final class Commands {

    private Commands() {}

    /** Prints what a finished file job read, wrote and rejected, on stderr. */
    static void summary(
            CommandLine.Model.CommandSpec spec,
            org.apache.flink.api.common.JobExecutionResult result,
            String output,
            String where,
            String... more) {
        java.io.PrintWriter err = spec.commandLine().getErr();
        err.printf(
                java.util.Locale.ROOT,
                "read %d records; wrote %d %s to %s; rejected %d",
                io.bloomstream.jobs.io.Tally.total(result, io.bloomstream.jobs.io.Tally.IN),
                io.bloomstream.jobs.io.Tally.total(result, io.bloomstream.jobs.io.Tally.OUT),
                output,
                where,
                io.bloomstream.jobs.io.Tally.total(result, io.bloomstream.jobs.io.Tally.REJECTED));
        for (int i = 0; i + 1 < more.length; i += 2) {
            err.printf(
                    java.util.Locale.ROOT,
                    "; %d %s",
                    io.bloomstream.jobs.io.Tally.total(result, more[i]),
                    more[i + 1]);
        }
        err.printf(" (%d ms)%n", result.getNetRuntime());
        err.flush();
    }

    /** Builds a config, turning a bad argument into a usage error. */
    static <T> T config(CommandLine.Model.CommandSpec spec, Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
