package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for the page rules of {@link ReadmeExamplesITCase}: names, headings and links. */
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
}
