package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.CountingBloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.testdata.GenerateTestDataCommand;
import io.bloomstream.jobs.testdata.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link BuildFilterCommand}. */
class BuildFilterCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @Test
    void everyListedAddressIsFlaggedAndUnlistedOnesWithinTheTargetRate() throws Exception {
        Path list = Cli.testdata().resolve("spam/blocklist.txt");
        Path filterFile = tmp.resolve("spam.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filterFile.toString(),
                                "--fpp",
                                "0.01",
                                "--normalize",
                                "email"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString())
                .contains("entries added     100000")
                .contains("hashes (k)        ")
                .contains("expected fpp      ");
        FilterFile file = FilterCodec.decodeFile(Files.readAllBytes(filterFile), null);
        assertThat(file.normalization()).isEqualTo(Normalization.EMAIL);
        MembershipFilter filter = file.filter();
        List<String> listed = Files.readAllLines(list);
        assertThat(listed).hasSize(GenerateTestDataCommand.BLOCKLIST_SIZE);
        for (String entry : listed) {
            assertThat(filter.mightContain(Normalization.EMAIL.apply(entry))).as(entry).isTrue();
        }
        // 10^5 probes from another seed, none of them listed. The flags are
        // Binomial(n, p) with p the filter's model rate; 4.5 sigma keeps a spurious failure
        // below 1e-5 while a layout or sizing bug (rate off by 20% or more) still fails.
        List<String> probes = TestData.addresses(99, 100_000, new HashSet<>(listed));
        long flagged = probes.stream().filter(filter::mightContain).count();
        double p = filter.expectedFpp();
        double n = probes.size();
        assertThat(p).isBetween(0.009, 0.0101);
        assertThat((double) flagged)
                .isBetween(
                        n * p - 4.5 * Math.sqrt(n * p * (1 - p)),
                        n * p + 4.5 * Math.sqrt(n * p * (1 - p)));
    }

    @Test
    void explicitBitsAndHashesAndACountingVariant() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("Spam.Example", "", "   ", "evil.example"));
        Path out = tmp.resolve("domains.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--bits",
                                "4096",
                                "--hashes",
                                "5",
                                "--normalize",
                                "domain",
                                "--counting"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString())
                .contains("entries added     2")
                .contains("lines skipped     2")
                .contains("bits (m)          4096");
        FilterFile file = FilterCodec.decodeFile(Files.readAllBytes(out), null);
        assertThat(file.filter()).isInstanceOf(CountingBloomFilter.class);
        assertThat(file.filter().mightContain("spam.example")).isTrue();
        assertThat(((CountingBloomFilter) file.filter()).remove("spam.example")).isTrue();
    }

    @Test
    void badFlagsExitNonZeroWithAClearMessage() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("a"));
        String out = tmp.resolve("f.bloom").toString();
        assertThat(cli.run("build-filter", "--input", list.toString(), "--output", out))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("Missing required argument");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01",
                                "--bits",
                                "100",
                                "--hashes",
                                "3"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("mutually exclusive");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "1.5"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains(
                        "'1.5' is not a rate between 0 and 1 (exclusive): did you mean 0.015 (1.5%)?");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01",
                                "--normalize",
                                "upper"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains("normalization must be none, lowercase, email or domain");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                tmp.resolve("nope").toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("no such file");
        assertThat(Files.exists(Path.of(out))).isFalse();
    }

    @Test
    void anExplicitShapeGetsThePageThatKeepsTheClassicRate() throws Exception {
        // m/n = 20, k = 10 over the 100,000 listed addresses: 512-bit pages had 2.3x the
        // classic rate; the automatic page keeps it within 5% (Sizing.autoPageBits).
        Path filterFile = tmp.resolve("shape.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                Cli.testdata().resolve("spam/blocklist.txt").toString(),
                                "--output",
                                filterFile.toString(),
                                "--bits",
                                "2000000",
                                "--hashes",
                                "10",
                                "--normalize",
                                "email"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString()).contains("layout            8192-bit pages");
        var spec =
                ((io.bloomstream.filter.BloomFilter)
                                FilterCodec.decodeFile(Files.readAllBytes(filterFile), null)
                                        .filter())
                        .spec();
        double classic = io.bloomstream.filter.Sizing.falsePositiveRate(2_000_000, 10, 100_000);
        assertThat(spec.expectedFpp(100_000)).isLessThanOrEqualTo(1.05 * classic);
        assertThat(cli.out.toString()).contains("(classic layout, same m and k: ");
    }
}
