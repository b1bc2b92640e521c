package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.Kills;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Exactly once across {@code kill -9}, for every stream command on a {@code --state-dir}: a run (a
 * child JVM) is killed at a random point after a checkpoint completed, once or twice in a row, and
 * the next run recovers. The outputs of the killed runs and the recovery together must equal, line
 * for line (sorted, duplicates counted), those of one uninterrupted run over the same input: no
 * line written twice (a re-read input would repeat the clean lines, the rejected ones, and with a
 * time field turn re-read lines into late ones), none lost. The recovery's summary ({@code --json})
 * must count what the directories hold.
 *
 * <p>Each case has its own fixed seed: it picks the kill points (a delay of 0 to 1 s after the
 * first checkpoint of the run) and the number of kills. Outputs depend on no timing: the inputs
 * have no event late by their watermark (times rise, with a disorder within the bound) except
 * records ahead of the wall clock by centuries, rejected whatever the timing; {@code count}'s
 * estimates, written every processing-time interval, are compared as a set of lines free of
 * duplicates, with every key, none above the uninterrupted run's greatest estimate (which of the
 * intervals fall before a run stops depends on the timing: a run that stops with an interval still
 * pending leaves its record to the next run, crashed or not). With {@code --fpp 1e-6} the filters'
 * answers are fixed by the ids (fixed seed), so the uninterrupted run is the model.
 */
class CrashRecoveryITCase {

    @TempDir Path tmp;

    /** A command's case: its flags (without input, outputs and state), input and seed. */
    record Case(
            String name, List<String> flags, Input input, int lines, boolean flagged, long seed) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Writes a case's input. */
    interface Input {
        void write(Path file, int lines, Random random) throws Exception;
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "dedup text",
                        List.of("dedup", "--fpp", "1e-6", "--max-line-bytes", "100"),
                        CrashRecoveryITCase::textIds,
                        LINES,
                        false,
                        11),
                new Case(
                        "dedup json with --time-field",
                        List.of(
                                "dedup",
                                "--fpp",
                                "1e-6",
                                "--format",
                                "json",
                                "--id-field",
                                "id",
                                "--time-field",
                                "ts",
                                "--retention",
                                "30d",
                                "--max-out-of-orderness",
                                "10s"),
                        CrashRecoveryITCase::timedJson,
                        LINES,
                        false,
                        12),
                new Case(
                        "frontier",
                        List.of("frontier", "--fpp", "1e-6"),
                        CrashRecoveryITCase::urls,
                        LINES,
                        false,
                        13),
                new Case(
                        "screen json",
                        List.of("screen", "--format", "json", "--field", "email"),
                        CrashRecoveryITCase::emails,
                        LINES,
                        true,
                        14),
                new Case(
                        "count json",
                        List.of(
                                "count",
                                "--format",
                                "json",
                                "--id-field",
                                "item",
                                "--key-field",
                                "key",
                                "--interval",
                                "300ms"),
                        CrashRecoveryITCase::items,
                        COUNT_LINES,
                        false,
                        15));
    }

    /**
     * Lines of an input: enough for a run of a few seconds (about 10^6 lines/s), so that the kills
     * fall while it reads.
     */
    private static final int LINES = 1_500_000;

    /** {@code count} reads about 10^5 lines/s. */
    private static final int COUNT_LINES = 300_000;

    private static void textIds(Path file, int n, Random r) throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            lines.add(
                    i % 5_000 == 7 ? "too-long-" + "x".repeat(120) + i : "id-" + r.nextInt(n / 2));
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    private static void timedJson(Path file, int n, Random r) throws Exception {
        List<String> lines = new ArrayList<>();
        long t = 1_700_000_000_000L;
        for (int i = 0; i < n; i++) {
            t += r.nextInt(20);
            long ts = t - r.nextInt(5_000); // disorder within the 10 s bound
            if (i % 7_000 == 3) {
                lines.add("{\"id\": \"broken-" + i);
            } else if (i % 9_000 == 5) {
                lines.add("{\"id\": \"future-" + i + "\", \"ts\": 32503680000000}");
            } else if (i % 11_000 == 1) {
                lines.add("{\"ts\": " + ts + "}");
            } else {
                lines.add("{\"id\": \"e-" + r.nextInt(n / 2) + "\", \"ts\": " + ts + "}");
            }
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    private static void urls(Path file, int n, Random r) throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            lines.add(
                    i % 6_000 == 2
                            ? "not a url " + i
                            : "https://host-"
                                    + r.nextInt(50)
                                    + ".example/page/"
                                    + r.nextInt(n / 4));
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    private static void emails(Path file, int n, Random r) throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (i % 8_000 == 4) {
                lines.add("{\"email\": broken " + i);
            } else if (i % 9_000 == 6) {
                lines.add("{\"name\": \"no email " + i + "\"}");
            } else {
                lines.add(
                        "{\"email\": \"user" + r.nextInt(100_000) + "@x.org\", \"n\": " + i + "}");
            }
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    /**
     * Each key's items are all in the first 30,000 lines (the item's number fixes its key): every
     * estimate written after them is the final one, whenever the interval falls.
     */
    private static void items(Path file, int n, Random r) throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            lines.add(
                    i % 7_000 == 1
                            ? "{broken " + i
                            : "{\"key\": \"k" + i % 8 + "\", \"item\": \"i" + i % 30_000 + "\"}");
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    /** A spam filter for {@code screen}: every third user of the input's 100,000. */
    private Path spamFilter() throws Exception {
        Path list = tmp.resolve("spam.txt");
        List<String> spam = new ArrayList<>();
        for (int i = 0; i < 100_000; i += 3) {
            spam.add("user" + i + "@x.org");
        }
        Files.write(list, spam, StandardCharsets.UTF_8);
        Path filter = tmp.resolve("spam.bloom");
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "1e-3"))
                .as(cli.err.toString())
                .isZero();
        return filter;
    }

    /** The arguments of a run of {@code c} into {@code dir}. */
    private List<String> args(Case c, Path input, Path dir, String... more) throws Exception {
        List<String> args = new ArrayList<>(c.flags());
        if (c.name().startsWith("screen")) {
            args.addAll(List.of("--filter", tmp.resolve("spam.bloom").toString()));
            args.addAll(List.of("--flagged-output", dir.resolve("flagged").toString()));
        }
        args.addAll(
                List.of(
                        "--quiet",
                        "--state-dir",
                        dir.resolve("state").toString(),
                        "--input",
                        input.toString(),
                        "--output",
                        dir.resolve("out").toString()));
        args.addAll(List.of(more));
        return args;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void everyLineOnceAcrossKills(Case c) throws Exception {
        Random random = new Random(c.seed());
        Path input = tmp.resolve("input.txt");
        c.input().write(input, c.lines(), new Random(c.seed() * 7919));
        if (c.flagged()) {
            spamFilter();
        }

        Path model = tmp.resolve("model");
        Cli uninterrupted = new Cli();
        assertThat(uninterrupted.run(args(c, input, model).toArray(String[]::new)))
                .as(uninterrupted.err.toString())
                .isZero();

        Path crashed = tmp.resolve("crashed");
        int kills = 1 + random.nextInt(2);
        for (int k = 0; k < kills; k++) {
            Kills.killAfterACheckpoint(
                    args(c, input, crashed, "--checkpoint-interval", "200ms"),
                    crashed.resolve("state/checkpoints"),
                    tmp.resolve("killed-" + k + ".log"),
                    random.nextInt(1_000));
        }
        Cli recovery = new Cli();
        assertThat(recovery.run(args(c, input, crashed, "--json").toArray(String[]::new)))
                .as(recovery.err.toString())
                .isZero();
        assertThat(recovery.err.toString()).contains("state: recovering from ");
        assertThat(hiddenFiles(crashed.resolve("out"))).isEmpty();

        for (String out : outputs(c)) {
            List<String> got = Kills.sorted(Cli.readParts(crashed.resolve(out)));
            List<String> want = Kills.sorted(Cli.readParts(model.resolve(out)));
            if (c.name().startsWith("count") && out.equals("out")) {
                assertCounts(got, want);
            } else {
                assertThat(Kills.excess(got, want))
                        .as("%s: lines of %s written twice after %d kill(s)", c, out, kills)
                        .isEmpty();
                assertThat(Kills.excess(want, got))
                        .as("%s: lines of %s lost after %d kill(s)", c, out, kills)
                        .isEmpty();
            }
        }
        Map<String, Object> summary = Cli.json(recovery.out.toString());
        assertThat(summary.get("counts_cover")).isEqualTo("input");
        assertThat(((Number) summary.get("records_in")).longValue()).isEqualTo(c.lines());
        assertThat(((Number) summary.get("records_out")).longValue())
                .as("records_out against the lines in out/")
                .isEqualTo(Cli.readParts(crashed.resolve("out")).size());
        assertThat(((Number) summary.get("records_rejected")).longValue())
                .as("records rejected against the lines in out/_rejected")
                .isEqualTo(Cli.readParts(crashed.resolve("out/_rejected")).size())
                .isPositive();
    }

    private static List<String> outputs(Case c) {
        return c.flagged()
                ? List.of("out", "out/_rejected", "flagged")
                : List.of("out", "out/_rejected");
    }

    /**
     * {@code count}: no estimate written twice, every key of the uninterrupted run, none above its
     * greatest estimate.
     */
    private static void assertCounts(List<String> got, List<String> want) throws Exception {
        assertThat(got).doesNotHaveDuplicates().isNotEmpty();
        Map<String, Long> model = greatest(want);
        Map<String, Long> crashed = greatest(got);
        assertThat(crashed.keySet()).isEqualTo(model.keySet());
        crashed.forEach(
                (key, estimate) ->
                        assertThat(estimate).as(key).isLessThanOrEqualTo(model.get(key)));
    }

    private static Map<String, Long> greatest(List<String> lines) throws Exception {
        Map<String, Long> max = new java.util.TreeMap<>();
        for (String line : lines) {
            Map<String, Object> r = Cli.json(line);
            max.merge(
                    String.valueOf(r.get("key")),
                    ((Number) r.get("estimate")).longValue(),
                    Math::max);
        }
        return max;
    }

    private static List<Path> hiddenFiles(Path dir) throws Exception {
        try (var files = Files.walk(dir)) {
            return files.filter(p -> p.getFileName().toString().contains(".inprogress."))
                    .collect(Collectors.toList());
        }
    }
}
