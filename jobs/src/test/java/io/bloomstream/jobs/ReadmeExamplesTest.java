package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the page rules of {@link ReadmeExamplesITCase}: names, headings and links; and that the
 * README's one build command, which that test cannot run, makes the jar its quick start runs.
 */
class ReadmeExamplesTest {

    @TempDir Path root;

    @Test
    void actualOutputsAreNamedAfterThePage() {
        assertThat(ReadmeExamplesITCase.actualName("README.md")).isEqualTo("README.actual.md");
        assertThat(ReadmeExamplesITCase.actualName("docs/cli.md")).isEqualTo("cli.actual.md");
        assertThat(ReadmeExamplesITCase.actualName("docs/sql/notes.md"))
                .isEqualTo("sql-notes.actual.md");
        assertThat(ReadmeExamplesITCase.actualName("CONTRIBUTING.md"))
                .isEqualTo("CONTRIBUTING.actual.md");
    }

    @Test
    void headingsGiveGitHubsAnchors() {
        assertThat(
                        ReadmeExamplesITCase.anchors(
                                List.of(
                                        "# SQL",
                                        "## `frontier`: a crawler's to-visit queue",
                                        "## On a cluster: Flink's SQL client",
                                        "## BLOOM_COUNT_DISTINCT",
                                        "```console",
                                        "# a comment in a block, not a heading",
                                        "```",
                                        "## Tests",
                                        "## Tests")))
                .containsExactlyInAnyOrder(
                        "sql",
                        "frontier-a-crawlers-to-visit-queue",
                        "on-a-cluster-flinks-sql-client",
                        "bloom_count_distinct",
                        "tests",
                        "tests-1");
    }

    @Test
    void headingsWithCodeBarsAndPowersGiveGitHubsAnchors() {
        assertThat(
                        ReadmeExamplesITCase.anchors(
                                List.of(
                                        "## Issue 32: the command line against `sort -u`, and the"
                                                + " operator at 10^7",
                                        "## Distinct counts at equal memory (16 KiB), mean"
                                                + " |relative error| over 20 seeds",
                                        "### `BLOOM_DEDUP` on XXH3-64 (issue 21, session 9)")))
                .containsExactlyInAnyOrder(
                        "issue-32-the-command-line-against-sort--u-and-the-operator-at-107",
                        "distinct-counts-at-equal-memory-16-kib-mean-relative-error-over-20-seeds",
                        "bloom_dedup-on-xxh3-64-issue-21-session-9");
    }

    @Test
    void linksToMissingFilesOrHeadingsAreBrokenAndOthersAreNot() throws Exception {
        Files.createDirectories(root.resolve("docs"));
        Files.writeString(root.resolve("docs/a.md"), "# A\n\n## Known heading\n");
        Path page = root.resolve("README.md");
        List<String> lines =
                List.of(
                        "[a](docs/a.md), [h](docs/a.md#known-heading), [self](#title),"
                                + " [web](https://flink.apache.org), `[not](a-link.md)`",
                        "# Title",
                        "```text",
                        "[in a block](nowhere.md)",
                        "```",
                        "[gone](docs/gone.md) and [bad](docs/a.md#unknown)");
        Files.write(page, lines);
        assertThat(ReadmeExamplesITCase.brokenLinks(root, page, lines))
                .containsExactly(
                        "line 6: docs/gone.md (no such file)",
                        "line 6: docs/a.md#unknown (no such heading)");
    }

    @Test
    void theBuildBeforeTheQuickStartMakesTheJarTheQuickStartRuns() throws Exception {
        Path root = Cli.testdata().getParent();
        List<String> readme = Files.readAllLines(root.resolve("README.md"));
        int quickStart = readme.indexOf("## Quick start");
        assertThat(quickStart).as("README: ## Quick start").isPositive();
        List<String> builds = commands(readme.subList(0, quickStart), "mvn ");
        assertThat(builds).as("the build commands before the quick start").hasSize(1);
        List<String> build = Arrays.asList(builds.get(0).split("\\s+"));
        assertThat(build)
                .as("%s: builds the jars", build)
                .containsAnyOf("package", "verify", "install", "deploy")
                .doesNotContain("-Dmaven.test.skip=true", "-Dmaven.test.skip");
        List<String> modules = modules(root, build);
        List<String> jars = new ArrayList<>();
        Matcher jar = Pattern.compile("java -jar (\\S+)").matcher(String.join("\n", readme));
        while (jar.find()) {
            jars.add(jar.group(1));
        }
        assertThat(commands(readme.subList(0, quickStart), "java ")).isEmpty();
        assertThat(jars).as("the jars the README runs").isNotEmpty();
        for (String j : jars) {
            Matcher m = Pattern.compile("([\\w-]+)/target/([\\w-]+)\\.jar").matcher(j);
            assertThat(m.matches()).as("%s: MODULE/target/NAME.jar", j).isTrue();
            assertThat(modules).as("the modules %s builds", build).contains(m.group(1));
            assertThat(Files.readString(root.resolve(m.group(1)).resolve("pom.xml")))
                    .as("%s/pom.xml makes %s", m.group(1), j)
                    .contains("<finalName>" + m.group(2) + "</finalName>");
        }
    }

    /** The commands ({@code $ } lines) of a page's lines that start with {@code prefix}. */
    private static List<String> commands(List<String> lines, String prefix) {
        List<String> commands = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("$ " + prefix)) {
                commands.add(line.substring(2));
            }
        }
        return commands;
    }

    /** The modules a Maven command builds: those of its {@code -pl}, or all of the parent's. */
    private static List<String> modules(Path root, List<String> mvn) throws Exception {
        int pl = mvn.indexOf("-pl");
        if (pl >= 0) {
            return List.of(mvn.get(pl + 1).split(","));
        }
        List<String> all = new ArrayList<>();
        Matcher m =
                Pattern.compile("<module>([^<]+)</module>")
                        .matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            all.add(m.group(1));
        }
        return all;
    }
}
