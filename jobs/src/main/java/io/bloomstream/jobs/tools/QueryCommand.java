package io.bloomstream.jobs.tools;

import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.console.FileErrors;
import io.bloomstream.jobs.console.JsonObjects;
import io.bloomstream.jobs.io.Utf8LineFormat;
import io.bloomstream.jobs.io.Utf8Lines;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code query}: the lines of a file that might be in a filter. */
@Command(
        name = "query",
        mixinStandardHelpOptions = true,
        description = {
            "Writes each input line that might be in the filter (normalized the way the file"
                    + " records), one per line, to --output or stdout; a summary goes to stderr.",
            "A line not written is certainly not in the filter; a written one is in it or a"
                    + " false positive."
        })
public final class QueryCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--filter", required = true, paramLabel = "FILTER", description = "Filter.")
    Path filter;

    @CommandLine.Mixin KeyOptions key;

    @Option(names = "--input", required = true, paramLabel = "FILE", description = "Lines.")
    Path input;

    @Option(names = "--output", paramLabel = "FILE", description = "Default: stdout.")
    Path output;

    @Option(
            names = "--json",
            description =
                    "The summary as one JSON object on stdout (needs --output for the lines).")
    boolean json;

    @Override
    public Integer call() throws IOException {
        if (json && output == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--json prints the summary on stdout: give --output for the lines");
        }
        FilterFile file = FilterFiles.read(filter, key.hasher(spec.commandLine()));
        String unreadable = FileErrors.unreadable(input);
        if (unreadable != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--input " + input + ": " + unreadable);
        }
        String unwritable = output == null ? null : FileErrors.unwritable(output);
        if (unwritable != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--output " + output + ": " + unwritable);
        }
        Normalization normalization =
                file.normalization() == null ? Normalization.NONE : file.normalization();
        MembershipFilter f = file.filter();
        long lines = 0;
        long matched = 0;
        long unusable = 0;
        // lines longer than the stream commands' default cap, or not UTF-8, are counted unusable
        try (Utf8LineFormat.LineReader r =
                new Utf8LineFormat.LineReader(
                        Files.newInputStream(input), null, Utf8Lines.DEFAULT_MAX_LINE_BYTES)) {
            if (output == null) {
                PrintWriter out = spec.commandLine().getOut(); // not ours to close
                long[] counts = copyMatches(r, out, normalization, f);
                out.flush();
                lines = counts[0];
                matched = counts[1];
                unusable = counts[2];
            } else {
                try (BufferedWriter w = Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
                    long[] counts = copyMatches(r, w, normalization, f);
                    lines = counts[0];
                    matched = counts[1];
                    unusable = counts[2];
                }
            }
        }
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("filter", filter.toString());
            m.put("input", input.toString());
            m.put("output", output.toString());
            m.put("lines", lines);
            m.put("might_be_in_filter", matched);
            m.put("unusable", unusable);
            m.put("normalization", normalization.toString());
            m.put("expected_fpp", f.expectedFpp());
            JsonObjects.print(spec.commandLine().getOut(), m);
            return 0;
        }
        PrintWriter err = spec.commandLine().getErr();
        err.printf(
                Locale.ROOT,
                "%d lines, %d might be in the filter, %d unusable under %s; expected false-positive"
                        + " rate %.3e%n",
                lines,
                matched,
                unusable,
                normalization,
                f.expectedFpp());
        err.flush();
        return 0;
    }

    /** Writes the lines that might be in {@code f}; returns lines, matched, unusable. */
    private static long[] copyMatches(
            Utf8LineFormat.LineReader r, Writer w, Normalization normalization, MembershipFilter f)
            throws IOException {
        long[] counts = new long[3];
        for (String line = r.read(); line != null; line = r.read()) {
            counts[0]++;
            String v = Utf8Lines.unreadable(line) ? null : normalization.apply(line);
            if (v == null) {
                counts[2]++;
            } else if (f.mightContain(v)) {
                counts[1]++;
                w.write(line);
                w.write('\n');
            }
        }
        return counts;
    }
}
