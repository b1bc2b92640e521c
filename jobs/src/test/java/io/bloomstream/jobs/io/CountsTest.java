package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.jobs.Cli;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Tests for {@link Counts}, and for the count options of the commands that use it. */
class CountsTest {

    @Test
    void readsPlainScientificAndSuffixedCounts() {
        assertThat(Counts.parse("80000000000")).isEqualTo(80_000_000_000L);
        assertThat(Counts.parse("80_000_000_000")).isEqualTo(80_000_000_000L);
        assertThat(Counts.parse("1e11")).isEqualTo(100_000_000_000L);
        assertThat(Counts.parse("1E6")).isEqualTo(1_000_000L);
        assertThat(Counts.parse("2.5e3")).isEqualTo(2_500L);
        assertThat(Counts.parse("2.5k")).isEqualTo(2_500L);
        assertThat(Counts.parse("100M")).isEqualTo(100_000_000L);
        assertThat(Counts.parse("100m")).isEqualTo(100_000_000L);
        assertThat(Counts.parse("3G")).isEqualTo(3_000_000_000L);
        assertThat(Counts.parse("3B")).isEqualTo(3_000_000_000L);
        assertThat(Counts.parse("1T")).isEqualTo(1_000_000_000_000L);
        assertThat(Counts.parse(" 42 ")).isEqualTo(42L);
        assertThat(Counts.parse("0")).isZero(); // the commands' own checks refuse it, by name
    }

    @Test
    void refusesJunkFractionsAndOverflowWithTheValue() {
        for (String junk : new String[] {"", "abc", "1e", "k", "12x", "1,000", "1e11e2", "ten"}) {
            assertThatThrownBy(() -> Counts.parse(junk))
                    .as(junk)
                    .isInstanceOf(CommandLine.TypeConversionException.class)
                    .hasMessage(
                            "'" + junk + "' is not a count (e.g. 100000, 1e11, 2.5k, 100M, 3G)");
        }
        assertThatThrownBy(() -> Counts.parse("1.5"))
                .hasMessageContaining("'1.5' is not a whole count");
        assertThatThrownBy(() -> Counts.parse("1e19"))
                .hasMessageContaining("'1e19' is not a whole count that fits in a long");
    }

    @Test
    void everyExpectedItemsOptionTakesACountAndNamesJunk() {
        Cli plan = new Cli();
        assertThat(plan.run("plan", "--expected-items", "1e6", "--fpp", "0.01"))
                .as(plan.err.toString())
                .isZero();
        assertThat(plan.out.toString()).contains("expected items    1000000");
        Cli k = new Cli();
        assertThat(k.run("plan", "--expected-items", "2.5k", "--fpp", "0.01")).isZero();
        assertThat(k.out.toString()).contains("expected items    2500");
        for (String command : new String[] {"plan", "dedup", "count", "frontier", "build-filter"}) {
            Cli cli = new Cli();
            int status =
                    cli.run(
                            command,
                            "--expected-items",
                            "lots",
                            "--input",
                            "x",
                            "--output",
                            "y",
                            "--fpp",
                            "0.01");
            assertThat(status).as(command).isEqualTo(2);
            assertThat(cli.err.toString())
                    .as(command)
                    .contains("'lots' is not a count (e.g. 100000, 1e11, 2.5k, 100M, 3G)");
        }
        Cli bits = new Cli();
        assertThat(
                        bits.run(
                                "build-filter",
                                "--input",
                                "x",
                                "--output",
                                "y",
                                "--bits",
                                "1M",
                                "--hashes",
                                "x"))
                .isEqualTo(2);
        assertThat(bits.err.toString()).doesNotContain("'1M'");
    }
}
