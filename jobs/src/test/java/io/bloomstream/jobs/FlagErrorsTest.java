package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tests for what a bad flag prints: the error and one line that fixes it (not the whole usage,
 * which scrolled the error away), flags named as flags, {@code --fpp} as a percentage, and a
 * warning for a high {@code --fpp}.
 */
class FlagErrorsTest {

    private static List<String> lines(Cli cli) {
        return cli.err.toString().lines().toList();
    }

    @Test
    void aBadValuePrintsTheErrorAndTheFixNotTheUsage() {
        Cli cli = new Cli();
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--fpp", "1")).isEqualTo(2);
        assertThat(lines(cli))
                .containsExactly(
                        "error: Invalid value for option '--fpp': '1' is not a rate between 0 and"
                                + " 1 (exclusive): did you mean 0.01 (1%)?",
                        "See 'bloomstream dedup --help' for every flag.");
    }

    @Test
    void aMissingGroupSaysErrorOnce() {
        Cli cli = new Cli();
        assertThat(cli.run("build-filter", "--input", "x", "--output", "y")).isEqualTo(2);
        assertThat(lines(cli).get(0))
                .startsWith("error: Missing required argument")
                .doesNotContain("Error:");
    }

    @Test
    void anUnknownFlagSuggestsTheNearestOne() {
        Cli cli = new Cli();
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--fppp", "0.1")).isEqualTo(2);
        assertThat(lines(cli))
                .containsExactly(
                        "error: Unknown options: '--fppp', '0.1': did you mean --fpp?",
                        "See 'bloomstream dedup --help' for every flag.");
    }

    @Test
    void namesFlagsAsFlags() {
        Cli cli = new Cli();
        assertThat(cli.run("plan", "--expected-items", "0", "--fpp", "0.01")).isEqualTo(2);
        assertThat(lines(cli)).first().isEqualTo("error: --expected-items must be >= 1, was 0");
        Cli count = new Cli();
        assertThat(count.run("count", "--input", "x", "--output", "y", "--expected-items", "0"))
                .isEqualTo(2);
        assertThat(lines(count)).first().isEqualTo("error: --expected-items must be >= 1, was 0");
    }

    @Test
    void acceptsAPercentageAndWarnsOfAHighRate() {
        Cli cli = new Cli();
        assertThat(cli.run("plan", "--expected-items", "1000", "--fpp", "1%")).isZero();
        assertThat(cli.out.toString()).contains("target fpp        0.01\n");
        assertThat(cli.err.toString()).isEmpty();
        Cli high = new Cli();
        assertThat(high.run("plan", "--expected-items", "1000", "--fpp", "0.25")).isZero();
        assertThat(lines(high))
                .containsExactly(
                        "warning: --fpp 0.25 is a high rate: one answer in 4 that says \"seen\""
                                + " or \"listed\" is wrong (1% is --fpp 0.01 or 1%)");
    }

    @Test
    void withExactAHighRateCostsReadsNotWrongAnswers(@org.junit.jupiter.api.io.TempDir Path tmp) {
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--fpp",
                                "0.3",
                                "--exact",
                                "--json",
                                "--quiet"))
                .as(cli.err.toString())
                .isZero();
        assertThat(lines(cli))
                .containsExactly(
                        "note: --fpp 0.3 with --exact: no answer is wrong, but once the filter"
                                + " holds --expected-items ids, about 30% of new ids are false"
                                + " positives of it, each costing a read of the exact entries in"
                                + " state (at --fpp 0.01, 1%)");
    }
}
