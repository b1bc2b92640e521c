package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs every example of the README and compares its output, so the README cannot drift.
 *
 * <p>The format, for whoever adds a section: a fenced block whose info string is {@code console} is
 * a shell session. A line starting with {@code $ } is a command (a trailing {@code \} continues it
 * on the next line); the lines after it, up to the next command, are its output as a terminal shows
 * it (stdout and stderr). The commands run in README order with bash from the repository root, the
 * real {@code jobs/target/bloomstream.jar} included (this test runs after {@code package}), so
 * later blocks may use the files of earlier ones. A block whose info string is {@code console
 * not-run: REASON} shows commands a test cannot run here (the build itself, a cluster, Kafka); its
 * reason is printed. Every other fenced block must name its language ({@code java}, {@code xml},
 * {@code text}) and hold no command: a block without an info string fails the test.
 *
 * <p>Compared as is, except what changes from run to run: durations {@code (N ms)}, {@code
 * "timestamp":N}, {@code "runtime_ms"}, the log file's path, and progress lines (which appear only
 * on slow runs). An expected line {@code ...} matches any number of lines. {@code /tmp/bloomstream}
 * is replaced by a fresh directory, and logs go to another ({@code BLOOMSTREAM_LOG_DIR}). The
 * actual outputs are written to {@code jobs/target/README.actual.md} to update the README from.
 */
class ReadmeExamplesITCase {

    private static final Pattern SCRATCH = Pattern.compile("/tmp/bloomstream(?![-\\w])");

    @TempDir Path tmp;

    @Test
    void everyExampleOfTheReadmeRunsAndPrintsWhatTheReadmeShows() throws Exception {
        Path root = Cli.testdata().getParent();
        Path readme = root.resolve("README.md");
        assertThat(root.resolve("jobs/target/bloomstream.jar")).exists();
        List<String> lines = Files.readAllLines(readme);
        Path scratch = tmp.resolve("bloomstream");
        List<String> actualReadme = new ArrayList<>();
        List<String> mismatches = new ArrayList<>();
        List<String> notRun = new ArrayList<>();
        int commands = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            actualReadme.add(line);
            if (!line.startsWith("```")) {
                continue;
            }
            String info = line.substring(3).trim();
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).startsWith("```")) {
                end++;
            }
            assertThat(end).as("unclosed block at README line " + (i + 1)).isLessThan(lines.size());
            List<String> body = lines.subList(i + 1, end);
            assertThat(info)
                    .as(
                            "README line %d: a fenced block needs an info string (console, console"
                                    + " not-run: REASON, java, xml, text)",
                            i + 1)
                    .isNotEmpty();
            if (info.startsWith("console not-run:")) {
                notRun.add("line " + (i + 1) + ": " + info.substring(16).trim());
                actualReadme.addAll(body);
            } else if (info.equals("console")) {
                for (Example e : parse(body, i + 2)) {
                    commands++;
                    String out = run(root, scratch, e.command);
                    actualReadme.add("$ " + e.shown);
                    actualReadme.addAll(out.isEmpty() ? List.of() : List.of(out.split("\n", -1)));
                    if (!matches(e.expected, actualLines(out))) {
                        mismatches.add(
                                "README line "
                                        + e.line
                                        + ": $ "
                                        + e.shown
                                        + "\n--- expected\n"
                                        + String.join("\n", e.expected)
                                        + "\n--- actual\n"
                                        + out);
                    }
                }
            } else {
                for (String b : body) {
                    assertThat(
                                    b.startsWith("$ ")
                                            || b.startsWith("java -jar")
                                            || b.startsWith("mvn "))
                            .as("README line %d: a command outside a console block: %s", i + 1, b)
                            .isFalse();
                }
                actualReadme.addAll(body);
            }
            actualReadme.add(lines.get(end));
            i = end;
        }
        Files.write(root.resolve("jobs/target/README.actual.md"), actualReadme);
        System.out.println(
                "README: " + commands + " commands run; not run: " + String.join("; ", notRun));
        assertThat(commands).isGreaterThan(10);
        assertThat(mismatches).as(String.join("\n\n", mismatches)).isEmpty();
    }

    /** One command of a console block and the output the README shows. */
    private static final class Example {
        final int line;
        final String shown;
        final String command;
        final List<String> expected = new ArrayList<>();

        Example(int line, String shown) {
            this.line = line;
            this.shown = shown;
            this.command = shown.replace("\\\n", " ");
        }
    }

    private static List<Example> parse(List<String> body, int firstLine) {
        List<Example> examples = new ArrayList<>();
        Example current = null;
        for (int j = 0; j < body.size(); j++) {
            String l = body.get(j);
            if (l.startsWith("$ ")) {
                StringBuilder cmd = new StringBuilder(l.substring(2));
                int start = j;
                while (cmd.toString().endsWith("\\") && j + 1 < body.size()) {
                    j++;
                    cmd.append('\n').append(body.get(j));
                }
                current = new Example(firstLine + start, cmd.toString());
                examples.add(current);
            } else {
                assertThat(current)
                        .as("README line %d: output before any $ command", firstLine + j)
                        .isNotNull();
                current.expected.add(l);
            }
        }
        return examples;
    }

    private String run(Path root, Path scratch, String command)
            throws IOException, InterruptedException {
        String cmd =
                SCRATCH.matcher(command).replaceAll(Matcher.quoteReplacement(scratch.toString()));
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", cmd).directory(root.toFile());
        pb.environment().put("BLOOMSTREAM_LOG_DIR", tmp.resolve("logs").toString());
        pb.redirectErrorStream(true);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        String text =
                new String(out, StandardCharsets.UTF_8)
                        .replace(scratch.toString(), "/tmp/bloomstream");
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }

    private static List<String> actualLines(String out) {
        List<String> lines = new ArrayList<>();
        if (out.isEmpty()) {
            return lines;
        }
        for (String l : out.split("\n", -1)) {
            if (!l.startsWith("progress: ")) {
                lines.add(l);
            }
        }
        return lines;
    }

    static String normalize(String line) {
        return line.replaceAll("\\(\\d+ ms\\)", "(N ms)")
                .replaceAll("\"timestamp\":\\d+", "\"timestamp\":N")
                .replaceAll("\"runtime_ms\":\\d+", "\"runtime_ms\":N")
                .replaceAll("\"log_file\":\"[^\"]*\"", "\"log_file\":LOG")
                .replaceAll("Flink's log: \\S+", "Flink's log: LOG");
    }

    /** Whether the actual lines match the expected ones, where a line {@code ...} matches any. */
    static boolean matches(List<String> expected, List<String> actual) {
        return matches(expected, 0, actual, 0);
    }

    private static boolean matches(List<String> e, int i, List<String> a, int j) {
        if (i == e.size()) {
            return j == a.size();
        }
        if (e.get(i).equals("...")) {
            for (int k = j; k <= a.size(); k++) {
                if (matches(e, i + 1, a, k)) {
                    return true;
                }
            }
            return false;
        }
        return j < a.size()
                && normalize(e.get(i)).equals(normalize(a.get(j)))
                && matches(e, i + 1, a, j + 1);
    }
}
