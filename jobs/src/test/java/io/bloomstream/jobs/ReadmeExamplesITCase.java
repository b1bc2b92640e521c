package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs every example of the documentation and compares its output, so the documentation cannot
 * drift: {@code README.md}, every page under {@code docs/} and {@code CONTRIBUTING.md}.
 *
 * <p>The pages run in a fixed order: the README, then the pages under {@code docs/} sorted by path,
 * then {@code CONTRIBUTING.md}; each is a dynamic test of its own. Each page starts with a fresh
 * {@code /tmp/bloomstream}, so a page's later blocks may use the files of its earlier ones, and no
 * page depends on another.
 *
 * <p>The format, for whoever adds a section: a fenced block whose info string is {@code console} is
 * a shell session. A line starting with {@code $ } is a command (a trailing {@code \} continues it
 * on the next line); the lines after it, up to the next command, are its output as a terminal shows
 * it (stdout and stderr). The commands run in page order with bash from the repository root, the
 * real {@code jobs/target/bloomstream.jar} included (this test runs after {@code package}). A block
 * whose info string is {@code console not-run: REASON} shows commands a test cannot run here (the
 * build itself, a cluster, Kafka); its reason is printed. Every other fenced block must name its
 * language ({@code java}, {@code xml}, {@code sql}, {@code text}) and hold no command: a block
 * without an info string fails the test. Relative links must point at files that exist, and links
 * to a heading of a page ({@code page.md#heading}) at a heading that exists. The pages that have no
 * examples but many links are held to the same link rule: {@code benchmarks/RESULTS.md}, the
 * history files under {@code benchmarks/results/}, which its first page must each link, and {@code
 * CHANGELOG.md}.
 *
 * <p>Compared as is, except what changes from run to run: durations {@code (N ms)}, {@code
 * "timestamp":N}, {@code "runtime_ms"}, the log file's path, and progress lines (which appear only
 * on slow runs). An expected line {@code ...} matches any number of lines. {@code /tmp/bloomstream}
 * is replaced by a fresh directory, and logs go to another ({@code BLOOMSTREAM_LOG_DIR}). The
 * actual outputs of each page are written to {@code jobs/target/PAGE.actual.md} ({@code
 * README.actual.md}, {@code cli.actual.md} for {@code docs/cli.md}, ...) to update the page from.
 */
class ReadmeExamplesITCase {

    private static final Pattern SCRATCH = Pattern.compile("/tmp/bloomstream(?![-\\w])");

    /** A Markdown link or image target: {@code [text](target)}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");

    @TempDir Path tmp;

    /** The pages whose examples run, in the order they run. */
    static List<Path> pages(Path root) throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            pages.addAll(
                    docs.filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p))
                            .sorted()
                            .collect(Collectors.toList()));
        }
        pages.add(root.resolve("CONTRIBUTING.md"));
        return pages;
    }

    @TestFactory
    Stream<DynamicTest> everyExampleOfEveryPageRunsAndPrintsWhatThePageShows() throws IOException {
        Path root = Cli.testdata().getParent().normalize();
        assertThat(root.resolve("jobs/target/bloomstream.jar")).exists();
        List<Path> pages = pages(root);
        assertThat(pages).allSatisfy(p -> assertThat(p).exists());
        assertThat(pages).contains(root.resolve("docs/cli.md"), root.resolve("docs/sql.md"));
        AtomicInteger commands = new AtomicInteger();
        // -Dbloomstream.docs.pages=docs/cli.md,README.md: only these pages, for whoever edits them
        String only = System.getProperty("bloomstream.docs.pages", "");
        List<String> chosen = only.isBlank() ? List.of() : List.of(only.split(","));
        Stream<DynamicTest> perPage =
                pages.stream()
                        .filter(
                                p ->
                                        chosen.isEmpty()
                                                || chosen.contains(root.relativize(p).toString()))
                        .map(
                                page -> {
                                    String name = root.relativize(page).toString();
                                    return DynamicTest.dynamicTest(
                                            name,
                                            () -> commands.addAndGet(runPage(root, page, name)));
                                });
        DynamicTest total =
                DynamicTest.dynamicTest(
                        "the pages ran more than 20 commands",
                        () -> assertThat(commands.get()).isGreaterThan(chosen.isEmpty() ? 20 : 0));
        return Stream.concat(perPage, Stream.of(total));
    }

    /**
     * The pages whose links are checked but whose blocks are not run: the benchmark results, their
     * history files sorted by path, and the changelog.
     */
    static List<Path> linkedPages(Path root) throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("benchmarks/RESULTS.md"));
        try (Stream<Path> history = Files.list(root.resolve("benchmarks/results"))) {
            pages.addAll(
                    history.filter(p -> p.toString().endsWith(".md"))
                            .sorted()
                            .collect(Collectors.toList()));
        }
        pages.add(root.resolve("CHANGELOG.md"));
        return pages;
    }

    @TestFactory
    Stream<DynamicTest> everyLinkOfTheBenchmarkResultsAndTheChangelogResolves() throws IOException {
        Path root = Cli.testdata().getParent().normalize();
        List<Path> pages = linkedPages(root);
        assertThat(pages).as("RESULTS.md, history files, CHANGELOG.md").hasSizeGreaterThan(3);
        return pages.stream()
                .map(
                        page -> {
                            String name = root.relativize(page).toString();
                            return DynamicTest.dynamicTest(
                                    name,
                                    () ->
                                            assertThat(
                                                            brokenLinks(
                                                                    root,
                                                                    page,
                                                                    Files.readAllLines(page)))
                                                    .as("%s: broken links", name)
                                                    .isEmpty());
                        });
    }

    @TestFactory
    Stream<DynamicTest> theFirstPageOfTheResultsLinksEveryHistoryFile() throws IOException {
        Path root = Cli.testdata().getParent().normalize();
        String first = Files.readString(root.resolve("benchmarks/RESULTS.md"));
        return linkedPages(root).stream()
                .filter(p -> p.getParent().endsWith("benchmarks/results"))
                .map(
                        page -> {
                            String link = "](results/" + page.getFileName() + ")";
                            return DynamicTest.dynamicTest(
                                    link,
                                    () ->
                                            assertThat(first)
                                                    .as("benchmarks/RESULTS.md links %s", link)
                                                    .contains(link));
                        });
    }

    /** Runs one page's examples; returns the number of commands run. */
    private int runPage(Path root, Path page, String name) throws Exception {
        List<String> lines = Files.readAllLines(page);
        Path scratch =
                tmp.resolve(actualName(name).replace(".actual.md", "")).resolve("bloomstream");
        Files.createDirectories(scratch);
        List<String> actualPage = new ArrayList<>();
        List<String> mismatches = new ArrayList<>();
        List<String> notRun = new ArrayList<>();
        int commands = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            actualPage.add(line);
            if (!line.startsWith("```")) {
                continue;
            }
            String info = line.substring(3).trim();
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).startsWith("```")) {
                end++;
            }
            assertThat(end)
                    .as("unclosed block at %s line %d", name, i + 1)
                    .isLessThan(lines.size());
            List<String> body = lines.subList(i + 1, end);
            assertThat(info)
                    .as(
                            "%s line %d: a fenced block needs an info string (console, console"
                                    + " not-run: REASON, java, xml, sql, text)",
                            name, i + 1)
                    .isNotEmpty();
            if (info.startsWith("console not-run:")) {
                notRun.add("line " + (i + 1) + ": " + info.substring(16).trim());
                actualPage.addAll(body);
            } else if (info.equals("console")) {
                for (Example e : parse(name, body, i + 2)) {
                    commands++;
                    String out = run(root, scratch, e.command);
                    actualPage.add("$ " + e.shown);
                    actualPage.addAll(out.isEmpty() ? List.of() : List.of(out.split("\n", -1)));
                    if (!matches(e.expected, actualLines(out))) {
                        mismatches.add(
                                name
                                        + " line "
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
                            .as("%s line %d: a command outside a console block: %s", name, i + 1, b)
                            .isFalse();
                }
                actualPage.addAll(body);
            }
            actualPage.add(lines.get(end));
            i = end;
        }
        Files.write(root.resolve("jobs/target/" + actualName(name)), actualPage);
        System.out.println(
                name
                        + ": "
                        + commands
                        + " commands run"
                        + (notRun.isEmpty() ? "" : "; not run: " + String.join("; ", notRun)));
        assertThat(brokenLinks(root, page, lines)).as("%s: broken links", name).isEmpty();
        assertThat(mismatches).as(String.join("\n\n", mismatches)).isEmpty();
        return commands;
    }

    /**
     * The file the actual outputs of a page go to, in {@code jobs/target}: {@code README.md} gives
     * {@code README.actual.md}, {@code docs/cli.md} gives {@code cli.actual.md}.
     */
    static String actualName(String page) {
        String p = page.replace('\\', '/');
        if (p.startsWith("docs/")) {
            p = p.substring("docs/".length());
        }
        return p.substring(0, p.length() - ".md".length()).replace('/', '-') + ".actual.md";
    }

    /** The relative links of a page (outside code) whose file or heading does not exist. */
    static List<String> brokenLinks(Path root, Path page, List<String> lines) throws IOException {
        List<String> broken = new ArrayList<>();
        boolean code = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                code = !code;
                continue;
            }
            if (code) {
                continue;
            }
            Matcher m = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue; // https:, mailto:
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!resolved.startsWith(root) || !Files.exists(resolved)) {
                    broken.add("line " + (i + 1) + ": " + target + " (no such file)");
                } else if (anchor != null
                        && resolved.toString().endsWith(".md")
                        && !anchors(Files.readAllLines(resolved)).contains(anchor)) {
                    broken.add("line " + (i + 1) + ": " + target + " (no such heading)");
                }
            }
        }
        return broken;
    }

    /** The anchors GitHub gives the headings of a page. */
    static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new HashSet<>();
        boolean code = false;
        for (String line : lines) {
            if (line.startsWith("```")) {
                code = !code;
            } else if (!code && line.startsWith("#")) {
                String slug =
                        line.replaceFirst("^#+\\s*", "")
                                .trim()
                                .toLowerCase(Locale.ROOT)
                                .replaceAll("[^\\p{L}\\p{N} _-]", "")
                                .replace(' ', '-');
                String unique = slug;
                for (int n = 1; !anchors.add(unique); n++) {
                    unique = slug + "-" + n;
                }
            }
        }
        return anchors;
    }

    /** One command of a console block and the output the page shows. */
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

    private static List<Example> parse(String name, List<String> body, int firstLine) {
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
                        .as("%s line %d: output before any $ command", name, firstLine + j)
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
