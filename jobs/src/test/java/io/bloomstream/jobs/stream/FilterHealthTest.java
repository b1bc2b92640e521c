package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.jobs.Cli;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the filter health of the summaries ({@code console.FilterHealth}): runs on the test
 * data whose true answers are known, checked in their {@code --json} form.
 */
class FilterHealthTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    private Map<String, Object> run(String... args) throws IOException {
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--json";
        all[args.length + 1] = "--quiet";
        assertThat(cli.run(all)).as(cli.err.toString()).isZero();
        return Cli.json(cli.out.toString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> filter(Map<String, Object> summary) {
        List<Object> filters = (List<Object>) summary.get("filters");
        assertThat(filters).hasSize(1);
        return (Map<String, Object>) filters.get(0);
    }

    @Test
    void aRightSizedDedupHasOneStageNoWarningAndConsistentFigures() throws Exception {
        Map<String, Object> f =
                filter(
                        run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString()));
        assertThat(f.get("operator")).isEqualTo("bloom-dedup");
        assertThat(f.get("cascade_stages")).isEqualTo(1L);
        assertThat(f.get("past_capacity")).isEqualTo(false);
        assertThat(f.get("suggested_expected_items")).isNull();
        assertThat(f.get("target_fpp")).isEqualTo(0.01);
        // The fullest stage's rate is its fill to the power k of the stage's spec.
        FilterSpec stage =
                DedupConfig.builder()
                        .expectedItems(1_000_000)
                        .fpp(0.01)
                        .build()
                        .stageSpec(
                                io.bloomstream.flink.dedup.BloomDedup.itemsPerShard(
                                        1_000_000, 1024),
                                0);
        double fill = (Double) f.get("fullest_fill_ratio");
        assertThat(fill).isBetween(0.001, 0.05); // 11,784 ids in a filter for 10^6
        assertThat((Double) f.get("fullest_fpp"))
                .isCloseTo(
                        Math.pow(fill, stage.hashes()),
                        org.assertj.core.data.Percentage.withPercentage(1e-6));
        // State: whole pages of the stage's page size (a shard's first stage at 10^6 ids is one
        // classic page), at least a tenth of the ids' pages and no more than every shard's pages.
        long bytes = (Long) f.get("state_bytes");
        long pageBytes = io.bloomstream.jobs.console.FilterHealth.pageBytes(stage);
        assertThat(bytes % pageBytes).isZero();
        long allPages = 1024 * stage.pages();
        assertThat(bytes / pageBytes).isBetween(Math.min(11_784L / 10, allPages), allPages);
    }

    /**
     * Exact mode's state is mostly its entries: 11,784 distinct ids (testdata/dedup/ids.truth.json)
     * of 14 ASCII characters, each 96 bytes on the heap backend (64 + an array of 16 + 14 bytes
     * rounded up to 32, {@code ExactEntrySize}); every duplicate (18,216) reads the entries once,
     * and so does every false positive of the filter.
     */
    @Test
    void anExactDedupCountsItsEntriesTheirBytesAndItsReads() throws Exception {
        Map<String, Object> f =
                filter(
                        run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--exact"));
        assertThat(f.get("exact")).isEqualTo(true);
        assertThat(f.get("exact_entries")).isEqualTo(11_784L);
        assertThat(f.get("exact_bytes")).isEqualTo(11_784L * 96);
        long filterBytes = (Long) f.get("filter_bytes");
        assertThat(filterBytes).isPositive();
        assertThat(f.get("state_bytes")).isEqualTo(filterBytes + 11_784L * 96);
        long caught = (Long) f.get("false_positives_caught");
        assertThat(f.get("exact_reads")).isEqualTo(18_216L + caught);
        Cli text = new Cli();
        assertThat(
                        text.run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                tmp.resolve("text").toString(),
                                "--exact",
                                "--quiet"))
                .as(text.err.toString())
                .isZero();
        assertThat(text.err.toString())
                .contains(", exact entries 1.08 MiB (11,784 ids, about 96 bytes each, estimated)")
                .contains(" reads of the exact entries (");
    }

    @Test
    void withoutExactTheStateIsTheFiltersAlone() throws Exception {
        Map<String, Object> f =
                filter(
                        run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString()));
        assertThat(f.get("exact")).isEqualTo(false);
        assertThat(f.get("exact_entries")).isNull();
        assertThat(f.get("state_bytes")).isEqualTo(f.get("filter_bytes"));
    }

    @Test
    void anOverfilledGlobalDedupWarnsWithTheDistinctIdsItPassed() throws Exception {
        Map<String, Object> summary =
                run(
                        "dedup",
                        "--input",
                        Cli.testdata().resolve("dedup/ids.txt").toString(),
                        "--output",
                        tmp.resolve("out").toString(),
                        "--expected-items",
                        "1000");
        Map<String, Object> f = filter(summary);
        // 11,784 distinct ids (testdata/dedup/ids.truth.json), at most ~1% of them lost as false
        // positives: the passed count rounds up to 12,000.
        assertThat(f.get("past_capacity")).isEqualTo(true);
        assertThat(f.get("suggested_expected_items")).isEqualTo(12_000L);
        assertThat((Long) f.get("cascade_stages")).isGreaterThan(1L);
        assertThat(summary.get("warnings").toString()).contains("use --expected-items 12000");
        assertThat(cli.err.toString()).startsWith("warning: bloom-dedup passed ");
    }

    @Test
    void aHostPastItsExpectedUrlsWarnsWithTheCascadeCapacityThatHoldsIt() throws Exception {
        // The largest host's distinct normalized URLs, exactly.
        Map<String, Set<String>> perHost = new HashMap<>();
        for (String line : Files.readAllLines(Cli.testdata().resolve("urls/crawl.txt"))) {
            try {
                var p = FrontierCommand.normalize(line);
                perHost.computeIfAbsent(p.key, k -> new HashSet<>()).add(p.values[0]);
            } catch (io.bloomstream.jobs.io.LineParser.BadRecord e) {
                // malformed: rejected by the job too
            }
        }
        int largest = perHost.values().stream().mapToInt(Set::size).max().orElseThrow();
        Map<String, Object> f =
                filter(
                        run(
                                "frontier",
                                "--input",
                                Cli.testdata().resolve("urls/crawl.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--expected-items",
                                "10"));
        // Stages of 10, 20, 40, ... ids: s stages hold 10 (2^s - 1). The largest host fills the
        // smallest such cascade that holds its URLs (false positives, at most 1%, cannot move it
        // below the previous boundary unless it sits within 1% of it).
        int stages = 1;
        while (10L * ((1L << stages) - 1) < largest) {
            stages++;
        }
        assertThat(f.get("cascade_stages")).isEqualTo((long) stages);
        assertThat((Long) f.get("suggested_expected_items"))
                .isGreaterThanOrEqualTo(largest)
                .isLessThanOrEqualTo(2L * largest + 100);
        assertThat(cli.err.toString())
                .contains("a key of bloom-dedup held more than its --expected-items 10");
    }

    @Test
    void anOverfilledCountWarnsWithTheLargestKeysUpperBound() throws Exception {
        Map<String, Object> f =
                filter(
                        run(
                                "count",
                                "--input",
                                Cli.testdata().resolve("count/clicks.jsonl").toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "user",
                                "--key-field",
                                "page",
                                "--expected-items",
                                "100",
                                "--output",
                                tmp.resolve("out").toString()));
        // testdata/count/clicks.truth.csv: /p/0 has the most users, 1,884.
        assertThat(f.get("past_capacity")).isEqualTo(true);
        assertThat((Long) f.get("suggested_expected_items")).isBetween(1_884L, 2_100L);
        assertThat((Long) f.get("cascade_stages")).isGreaterThan(1L);
        // The fullest filter's figures are those of an output record.
        double fullest = 0;
        for (String line : Cli.readParts(tmp.resolve("out"))) {
            fullest = Math.max(fullest, (Double) Cli.json(line).get("fill_ratio"));
        }
        assertThat(f.get("fullest_fill_ratio")).isEqualTo(fullest);
    }

    @Test
    void aCountReportsTheStatePagesItAllocatedNotItsNominalSize() throws Exception {
        // Four ids over a global count sized for 10^9: 1024 shards of about 976,563 ids each, a
        // nominal 1.1 GiB of filters, of which four pages at most were ever written.
        Path in = tmp.resolve("four.txt");
        java.nio.file.Files.write(in, List.of("a", "b", "c", "d"));
        Map<String, Object> f =
                filter(
                        run(
                                "count",
                                "--input",
                                in.toString(),
                                "--expected-items",
                                "1000000000",
                                "--output",
                                tmp.resolve("out").toString()));
        String note = (String) f.get("state_note");
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("([0-9,]+) pages of ([0-9,]+) bytes").matcher(note);
        assertThat(m.matches()).as(note).isTrue();
        long pages = Long.parseLong(m.group(1).replace(",", ""));
        long pageBytes = Long.parseLong(m.group(2).replace(",", ""));
        assertThat(pages).isBetween(1L, 4L);
        assertThat(f.get("state_bytes")).isEqualTo(pages * pageBytes);
        assertThat((Long) f.get("state_bytes")).isLessThan(1L << 20);
    }

    @Test
    void aRightSizedCountHasNoWarning() throws Exception {
        Map<String, Object> f =
                filter(
                        run(
                                "count",
                                "--input",
                                Cli.testdata().resolve("count/clicks.jsonl").toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "user",
                                "--key-field",
                                "page",
                                "--expected-items",
                                "5000",
                                "--output",
                                tmp.resolve("out").toString()));
        assertThat(f.get("past_capacity")).isEqualTo(false);
        assertThat(f.get("cascade_stages")).isEqualTo(1L);
        // The fullest filter's rate is the paged layout's model at its estimated items (the keys'
        // filters share one spec, so the largest estimate is the fullest), not fill^k.
        Map<String, Object> fullest = null;
        for (String line : Cli.readParts(tmp.resolve("out"))) {
            Map<String, Object> e = Cli.json(line);
            if (fullest == null
                    || ((Number) e.get("estimate")).doubleValue()
                            > ((Number) fullest.get("estimate")).doubleValue()) {
                fullest = e;
            }
        }
        FilterSpec stage =
                io.bloomstream.flink.FilterSizing.builder()
                        .expectedItems(5000)
                        .build()
                        .stageSpec(5000, 0.01, 0);
        long bits = (Long) fullest.get("bits");
        int hashes = ((Long) fullest.get("hashes")).intValue();
        double paged =
                io.bloomstream.filter.Sizing.pagedFalsePositiveRate(
                        bits,
                        hashes,
                        Math.round(((Number) fullest.get("estimate")).doubleValue()),
                        stage.pageBits());
        assertThat((Double) f.get("fullest_fpp"))
                .isCloseTo(paged, org.assertj.core.data.Percentage.withPercentage(1e-6));
    }

    @Test
    void anOverfullFilterFileWarnsTheScreenWithTheEntriesToBuildFor() throws Exception {
        Path bloom = tmp.resolve("small.bloom");
        assertThat(
                        new Cli()
                                .run(
                                        "build-filter",
                                        "--input",
                                        Cli.testdata().resolve("spam/blocklist.txt").toString(),
                                        "--output",
                                        bloom.toString(),
                                        "--fpp",
                                        "0.01",
                                        "--expected-items",
                                        "40000",
                                        "--normalize",
                                        "email"))
                .isZero();
        Map<String, Object> f =
                filter(
                        run(
                                "screen",
                                "--filter",
                                bloom.toString(),
                                "--input",
                                Cli.testdata().resolve("spam/mails.jsonl").toString(),
                                "--format",
                                "json",
                                "--field",
                                "from",
                                "--output",
                                tmp.resolve("clean").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()));
        // 100,000 entries in a filter for 40,000: the estimate from its bits is near 100,000.
        assertThat(f.get("past_capacity")).isEqualTo(true);
        assertThat((Long) f.get("suggested_expected_items")).isBetween(99_000L, 110_000L);
        assertThat((Double) f.get("fullest_fpp")).isGreaterThan(0.01);
    }
}
