package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inspect --state-dir} and {@code --savepoint} on the state of real {@code dedup} and {@code
 * count} runs, against what those runs wrote: the ids passed are the items the filters recorded,
 * the estimate from the set bits lies within 3 standard errors of them, and the fullest stage's
 * rate is the run summary's.
 */
class InspectSavepointCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @Test
    void inspectsAGlobalDedupsStateDirectory() throws Exception {
        Path state = tmp.resolve("state");
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                Cli.testdata().resolve("dedup/ids.txt").toString(),
                                "--output",
                                out.toString(),
                                "--state-dir",
                                state.toString()))
                .isZero();
        long passed = Cli.readParts(out).size();
        String summary = cli.err.toString();
        assertThat(cli.run("inspect", "--state-dir", state.toString(), "--json")).isZero();
        Map<String, Object> op = operator(cli.out.toString());
        assertThat(op).containsEntry("uid", "bloom-dedup").containsEntry("kind", "dedup");
        assertThat(op).containsEntry("keys", 1024L).containsEntry("items_added", passed);
        assertWithinThreeStandardErrors(op, passed);
        assertThat(op.get("exact_entries")).isNull();
        // the run summary's rate of the fullest filter, printed with %.2e
        assertThat(summary)
                .contains(
                        String.format(
                                java.util.Locale.ROOT,
                                "its fpp %.2e (target 0.01)",
                                (Double) op.get("fullest_stage_fpp")));

        Cli text = new Cli();
        assertThat(text.run("inspect", "--state-dir", state.toString())).isZero();
        assertThat(text.out.toString())
                .contains("bloom-dedup (dedup, global: 1024 shards)")
                .contains(
                        String.format(
                                java.util.Locale.ROOT, "items added              %,d", passed))
                .contains("estimated distinct")
                .contains("target 0.0100");
    }

    @Test
    void inspectsAPerKeyExactDedupAndAGlobalCount() throws Exception {
        Path input = tmp.resolve("events.json");
        Random random = new Random(4302);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            int id = random.nextInt(4_000);
            lines.add("{\"user\":\"u" + (id % 5) + "\",\"id\":\"e" + id + "\"}");
        }
        Files.write(input, lines);
        Path dedupState = tmp.resolve("dedup-state");
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                input.toString(),
                                "--output",
                                out.toString(),
                                "--state-dir",
                                dedupState.toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "id",
                                "--key-field",
                                "user",
                                "--exact"))
                .isZero();
        long passed = Cli.readParts(out).size();
        Cli dedup = new Cli();
        assertThat(dedup.run("inspect", "--state-dir", dedupState.toString(), "--json")).isZero();
        Map<String, Object> op = operator(dedup.out.toString());
        assertThat(op).containsEntry("keys", 5L).containsEntry("exact_entries", passed);
        assertThat(op).containsEntry("items_added", passed);
        assertWithinThreeStandardErrors(op, passed);

        Path countState = tmp.resolve("count-state");
        assertThat(
                        cli.run(
                                "count",
                                "--input",
                                input.toString(),
                                "--output",
                                tmp.resolve("counts").toString(),
                                "--state-dir",
                                countState.toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "id"))
                .isZero();
        Cli count = new Cli();
        assertThat(count.run("inspect", "--state-dir", countState.toString(), "--json")).isZero();
        Map<String, Object> c = operator(count.out.toString());
        assertThat(c).containsEntry("uid", "bloom-count").containsEntry("kind", "count");
        assertThat(c).containsEntry("items_added", passed);
        assertWithinThreeStandardErrors(c, passed);
    }

    @Test
    void inspectsAScreensFileInForce() throws Exception {
        Path filter = tmp.resolve("spam.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                Cli.testdata().resolve("spam/blocklist.txt").toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.001",
                                "--normalize",
                                "email"))
                .isZero();
        Path state = tmp.resolve("screen-state");
        assertThat(
                        cli.run(
                                "screen",
                                "--filter",
                                filter.toString(),
                                "--input",
                                Cli.testdata().resolve("spam/mails.jsonl").toString(),
                                "--format",
                                "json",
                                "--field",
                                "from",
                                "--output",
                                tmp.resolve("clean").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString(),
                                "--state-dir",
                                state.toString()))
                .isZero();
        Cli inspect = new Cli();
        assertThat(inspect.run("inspect", "--state-dir", state.toString(), "--json")).isZero();
        Map<String, Object> op = operator(inspect.out.toString());
        assertThat(op).containsEntry("uid", "bloom-screen").containsEntry("kind", "screen");
        assertThat(op.get("filter").toString()).contains("path=" + filter);
        assertThat(op).containsEntry("overlay_added", 0L).containsEntry("overlay_removed", 0L);
    }

    @Test
    void refusesWhatIsNoSavepointAndNamesTheProblem() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        assertThat(cli.run("inspect", "--state-dir", empty.toString())).isEqualTo(2);
        assertThat(cli.err.toString()).contains("holds no savepoint or checkpoint yet");

        Cli notOne = new Cli();
        assertThat(notOne.run("inspect", "--savepoint", empty.toString())).isEqualTo(2);
        assertThat(notOne.err.toString()).contains("has no _metadata file");

        Cli both = new Cli();
        assertThat(
                        both.run(
                                "inspect",
                                "--savepoint",
                                empty.toString(),
                                "--state-dir",
                                empty.toString()))
                .isEqualTo(2);
        assertThat(both.err.toString()).contains("mutually exclusive");

        Cli kind = new Cli();
        assertThat(kind.run("inspect", "--savepoint", empty.toString(), "--kind", "dedupe"))
                .isEqualTo(2);
        assertThat(kind.err.toString()).contains("--kind must be dedup, count or screen");
    }

    private static Map<String, Object> operator(String out) throws Exception {
        Map<String, Object> json = Cli.json(out.substring(out.indexOf('{')));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> ops = (List<Map<String, Object>>) json.get("operators");
        assertThat(ops).hasSize(1);
        return ops.get(0);
    }

    private static void assertWithinThreeStandardErrors(Map<String, Object> op, long passed) {
        double estimate = (Double) op.get("estimated_distinct");
        double se = (Double) op.get("estimate_standard_error");
        assertThat(se).isPositive();
        assertThat(Math.abs(estimate - passed))
                .as("estimate %.1f, standard error %.2f, %d passed", estimate, se, passed)
                .isLessThanOrEqualTo(3 * se);
    }
}
