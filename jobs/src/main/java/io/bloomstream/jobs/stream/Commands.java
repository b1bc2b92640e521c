package io.bloomstream.jobs.stream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.bloomstream.jobs.console.FilterHealth;
import io.bloomstream.jobs.console.JobFailedException;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.io.RejectReasons;
import io.bloomstream.jobs.io.RunCounts;
import io.bloomstream.jobs.io.Tally;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.flink.api.common.JobExecutionResult;
import picocli.CommandLine;

/**
 * Checks shared by the stream commands, reported as usage errors (exit status 2), and summaries.
 */
final class Commands {

    private Commands() {}

    /**
     * Prints what a finished file job read, wrote and rejected, and the health of its filters: as
     * text on stderr, or as one JSON object on stdout with {@code --json}. Warnings (a filter past
     * its capacity) go to stderr either way. A run that rejected every record it read then fails
     * ({@link #allRejected}): its exit status is 1, and with {@code --json} its object is the
     * failure's.
     *
     * @param more pairs of an accumulator's name and the text after its count
     */
    static void summary(
            CommandLine.Model.CommandSpec spec,
            RunOptions options,
            RunOptions.Run run,
            String output,
            String where,
            List<FilterHealth> health,
            String... more)
            throws JobFailedException {
        var result = run.result;
        PrintWriter err = spec.commandLine().getErr();
        for (FilterHealth h : health) {
            if (h.warning != null) {
                err.println("warning: " + h.warning);
            }
        }
        String allRejected = allRejected(spec, result);
        if (options.json) {
            if (allRejected != null) {
                throw JobFailedException.of(allRejected, null, run.logFile);
            }
            json(spec, run, where, health, more);
            err.flush();
            return;
        }
        err.printf(
                Locale.ROOT,
                "read %d records; wrote %d %s to %s; rejected %d",
                Tally.total(result, Tally.IN),
                Tally.total(result, Tally.OUT),
                output,
                where,
                Tally.total(result, Tally.REJECTED));
        for (int i = 0; i + 1 < more.length; i += 2) {
            err.printf(Locale.ROOT, "; %d %s", Tally.total(result, more[i]), more[i + 1]);
        }
        err.printf(" (%d ms)%n", result.getNetRuntime());
        String recovered = recovered(run);
        if (recovered != null) {
            err.println(recovered);
        }
        for (FilterHealth h : health) {
            err.println(h.line());
        }
        if (run.logFile != null && allRejected == null) {
            err.println("Flink's log: " + run.logFile);
        }
        err.flush();
        if (allRejected != null) {
            throw JobFailedException.of(allRejected, null, run.logFile);
        }
    }

    /**
     * What the counts of a run that recovered a killed run cover, or null when it did not: the
     * whole input (the killed run's records up to its checkpoint included, as in the outputs), or
     * this run's only.
     */
    static String recovered(RunOptions.Run run) {
        if (run.recoveredFrom == null) {
            return null;
        }
        if (!run.wholeInput) {
            return "recovered from the killed run's checkpoint "
                    + run.recoveredFrom
                    + ": these counts are this run's only";
        }
        return String.format(
                Locale.ROOT,
                "recovered from the killed run's checkpoint %s: these counts cover the whole input,"
                        + " as the outputs do (%d records read, %d written and %d rejected by the"
                        + " killed run up to that checkpoint; the rest by this run)",
                run.recoveredFrom,
                RunCounts.resumed(run.result, Tally.IN),
                RunCounts.resumed(run.result, Tally.OUT),
                RunCounts.resumed(run.result, Tally.REJECTED));
    }

    /**
     * Why a run that read records and rejected every one of them failed, or null: the reasons, and
     * the flags whose value is a field the records lack ("check --id-field idd").
     */
    static String allRejected(CommandLine.Model.CommandSpec spec, JobExecutionResult result) {
        long in = Tally.total(result, Tally.IN);
        // records only: screen's bad update commands are in _rejected too
        long rejected =
                Tally.total(result, Tally.REJECTED) - Tally.total(result, CountRejected.COMMANDS);
        if (in == 0 || rejected < in) {
            return null;
        }
        Map<String, Long> reasons = RejectReasons.of(result);
        StringBuilder s = new StringBuilder("every record read (" + in + ") was rejected: ");
        List<String> parts = new ArrayList<>();
        long named = 0;
        List<String> fields = new ArrayList<>();
        for (Map.Entry<String, Long> e : byCount(reasons)) {
            parts.add(e.getValue() + " " + e.getKey());
            named += e.getValue();
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("^missing (?:key )?field '(.*)'$")
                            .matcher(e.getKey());
            if (m.matches()) {
                fields.add(m.group(1));
            }
        }
        if (named < rejected) {
            parts.add((rejected - named) + " late");
        }
        s.append(String.join(", ", parts));
        List<String> flags = new ArrayList<>();
        for (String field : fields) {
            for (CommandLine.Model.OptionSpec o : spec.options()) {
                if (field.equals(String.valueOf((Object) o.getValue()))) {
                    flags.add(o.longestName() + " " + field);
                }
            }
        }
        if (!flags.isEmpty()) {
            s.append("; check ").append(String.join(", ", flags));
        }
        return s.toString();
    }

    private static List<Map.Entry<String, Long>> byCount(Map<String, Long> reasons) {
        List<Map.Entry<String, Long>> list = new ArrayList<>(reasons.entrySet());
        list.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        return list;
    }

    private static void json(
            CommandLine.Model.CommandSpec spec,
            RunOptions.Run run,
            String where,
            List<FilterHealth> health,
            String... more) {
        PrintWriter out = spec.commandLine().getOut();
        try (JsonGenerator g =
                new JsonFactory()
                        .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                        .createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("command", spec.name());
            g.writeStringField("output", where);
            g.writeNumberField("records_in", Tally.total(run.result, Tally.IN));
            g.writeNumberField("records_out", Tally.total(run.result, Tally.OUT));
            g.writeNumberField("records_rejected", Tally.total(run.result, Tally.REJECTED));
            for (int i = 0; i + 1 < more.length; i += 2) {
                g.writeNumberField(more[i].replace('-', '_'), Tally.total(run.result, more[i]));
            }
            g.writeNumberField("runtime_ms", run.result.getNetRuntime());
            if (run.recoveredFrom != null) {
                g.writeStringField("recovered_from", run.recoveredFrom);
                g.writeStringField("counts_cover", run.wholeInput ? "input" : "run");
                g.writeNumberField(
                        "records_in_before_recovery",
                        run.wholeInput ? RunCounts.resumed(run.result, Tally.IN) : 0);
            } else {
                g.writeNullField("recovered_from");
            }
            g.writeArrayFieldStart("filters");
            for (FilterHealth h : health) {
                h.json(g);
            }
            g.writeEndArray();
            g.writeArrayFieldStart("warnings");
            for (FilterHealth h : health) {
                if (h.warning != null) {
                    g.writeString(h.warning);
                }
            }
            g.writeEndArray();
            if (run.logFile != null) {
                g.writeStringField("log_file", run.logFile.toString());
            } else {
                g.writeNullField("log_file");
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        out.println();
        out.flush();
    }

    /**
     * Why two output directories would mix their files, or null if they do not: the same directory,
     * or one inside the other (a reader of the outer one, such as the file source, reads the inner
     * one's files too; the rejected output {@code OUTPUT/_rejected} is inside {@code OUTPUT}).
     * Local paths are compared absolute and normalized, other URIs as written, normalized.
     */
    static String overlap(String output, String other) {
        java.net.URI a = uri(output);
        java.net.URI b = uri(other);
        if (a.equals(b)) {
            return "are the same directory";
        }
        if (inside(b, a)) {
            return "overlap (the second is inside the first)";
        }
        if (inside(a, b)) {
            return "overlap (the first is inside the second)";
        }
        return null;
    }

    private static boolean inside(java.net.URI inner, java.net.URI outer) {
        String o = outer.toString();
        return inner.toString().startsWith(o.endsWith("/") ? o : o + "/");
    }

    private static java.net.URI uri(String dir) {
        java.net.URI u = new org.apache.flink.core.fs.Path(dir).toUri();
        if (u.getScheme() == null || "file".equals(u.getScheme())) {
            u = java.nio.file.Path.of(u.getPath()).toAbsolutePath().normalize().toUri();
        } else {
            u = u.normalize();
        }
        String s = u.toString();
        return java.net.URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
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
