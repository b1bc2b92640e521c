package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BootstrapCommand}: its state, resumed by {@code dedup --state-dir}, passes none of the
 * bootstrapped ids and the new ones (all in exact mode; else all but the filter's false positives),
 * and its refusals.
 */
class BootstrapCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    /** {@code count} random ids, distinct (64 random bits each). */
    static List<String> ids(long seed, int count) {
        Random random = new Random(seed);
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ids.add(Long.toHexString(random.nextLong()));
        }
        return ids;
    }

    private Path file(String name, List<String> lines) throws Exception {
        Path f = tmp.resolve(name);
        Files.write(f, lines);
        return f;
    }

    /** Runs {@code bootstrap --ids ids --state-dir state} with {@code flags}; it must succeed. */
    private void bootstrap(String ids, Path state, String[] flags) {
        String[] args = {"bootstrap", "--ids", ids, "--state-dir", state.toString()};
        assertThat(cli.run(concat(args, flags))).as(cli.err.toString()).isZero();
    }

    /** Runs {@code dedup} on {@code state} with {@code flags}; it must succeed. */
    private void dedup(String input, Path out, Path state, String[] flags) {
        String[] args = {
            "dedup", "--input", input, "--output", out.toString(), "--state-dir", state.toString()
        };
        assertThat(cli.run(concat(args, flags))).as(cli.err.toString()).isZero();
    }

    /** The bootstrapped ids and as many new ones, shuffled together. */
    private static List<String> mixed(List<String> old, List<String> fresh, long seed) {
        List<String> all = new ArrayList<>(old);
        all.addAll(fresh);
        Collections.shuffle(all, new Random(seed));
        return all;
    }

    /**
     * Text ids, global mode: none of the 2,000 bootstrapped ids passes; of the 2,000 new ones at
     * most 60 are dropped (fpp 0.01 at the capacity of 10,000 ids, so each new id is dropped with
     * at most 1%: a binomial mean of 20 or less, standard deviation 4.5; 60 is 9 of them above).
     */
    @Test
    void dedupOnABootstrappedStateDirPassesNoneOfTheIds() throws Exception {
        List<String> old = ids(4401, 2_000);
        List<String> fresh = ids(4402, 2_000);
        Path state = tmp.resolve("state");
        String[] sizing = {"--expected-items", "10000", "--fpp", "0.01"};
        bootstrap(file("old.txt", old).toString(), state, sizing);
        assertThat(cli.err.toString())
                .contains("read 2000 ids; 1024 shards (global)")
                .contains("next: bloomstream dedup --state-dir " + state);
        Path out = tmp.resolve("out");
        dedup(file("day2.txt", mixed(old, fresh, 4403)).toString(), out, state, sizing);
        List<String> passed = Cli.readParts(out);
        assertThat(passed)
                .as("bootstrapped ids that passed")
                .noneMatch(new HashSet<>(old)::contains);
        assertThat(new HashSet<>(fresh)).containsAll(passed);
        assertThat(fresh.size() - passed.size()).as("new ids dropped").isBetween(0, 60);
    }

    /**
     * JSON lines, one filter per key, exact mode: no bootstrapped (key, id) passes, every new one
     * does, and so does an old id under another key (per key, it is new there). Lines that do not
     * parse are counted, not bootstrapped.
     */
    @Test
    void jsonPerKeyExactPassesEveryNewIdAndNoOldOne() throws Exception {
        List<String> old = new ArrayList<>();
        for (String id : ids(4411, 1_000)) {
            old.add(json("k" + (id.hashCode() & 7), id));
        }
        List<String> fresh = new ArrayList<>();
        for (String id : ids(4412, 1_000)) {
            fresh.add(json("k" + (id.hashCode() & 7), id));
        }
        fresh.add(json("elsewhere", idOf(old.get(0))));
        List<String> bootstrapped = new ArrayList<>(old);
        bootstrapped.add("not json");
        bootstrapped.add("{\"key\":\"k1\"}"); // no id
        Path state = tmp.resolve("state");
        String[] flags = {
            "--format",
            "json",
            "--id-field",
            "id",
            "--key-field",
            "key",
            "--exact",
            "--expected-items",
            "500",
            "--fpp",
            "0.01"
        };
        bootstrap(file("old.json", bootstrapped).toString(), state, flags);
        assertThat(cli.err.toString())
                .contains("warning: 2 of 1002 lines could not be parsed")
                .contains("read 1000 ids (2 lines rejected); 8 keys");
        Path out = tmp.resolve("out");
        dedup(file("day2.json", mixed(old, fresh, 4413)).toString(), out, state, flags);
        assertThat(new HashSet<>(Cli.readParts(out))).isEqualTo(new HashSet<>(fresh));
    }

    /**
     * With processing-time retention the ids count as seen when the bootstrap read them: a dedup
     * within the hour passes none of them, and every new one (exact mode).
     */
    @Test
    void retentionInProcessingTimeCountsFromTheBootstrap() throws Exception {
        List<String> old = ids(4441, 500);
        List<String> fresh = ids(4442, 500);
        Path state = tmp.resolve("state");
        String[] flags = {"--retention", "1h", "--exact", "--expected-items", "2000"};
        bootstrap(file("old.txt", old).toString(), state, flags);
        Path out = tmp.resolve("out");
        dedup(file("day2.txt", mixed(old, fresh, 4443)).toString(), out, state, flags);
        assertThat(new HashSet<>(Cli.readParts(out))).isEqualTo(new HashSet<>(fresh));
    }

    @Test
    void savepointDirIsWrittenOnceAndANonEmptyOneIsRefused() throws Exception {
        Path ids = file("ids.txt", ids(4421, 100));
        Path savepoint = tmp.resolve("savepoint");
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--savepoint-dir",
                                savepoint.toString(),
                                "--uid",
                                "my-dedup"))
                .as(cli.err.toString())
                .isZero();
        assertThat(savepoint.resolve("_metadata")).isRegularFile();
        assertThat(BootstrapCommand.subtaskStates(savepoint, "my-dedup")).isPositive();
        assertThat(cli.err.toString())
                .contains("next: flink run -s " + savepoint + " with a job of uid my-dedup");
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--savepoint-dir",
                                savepoint.toString()))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--savepoint-dir " + savepoint + " is not empty");
    }

    @Test
    void refusesAStateDirThatHoldsStateOrWasWrittenWithOtherFlags() throws Exception {
        Path ids = file("ids.txt", ids(4431, 100));
        Path state = tmp.resolve("state");
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                state.toString(),
                                "--fpp",
                                "0.01"))
                .as(cli.err.toString())
                .isZero();
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                state.toString(),
                                "--fpp",
                                "0.01"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains("already holds dedup state: a bootstrap would replace it");
        // the dedup run with another --fpp is refused by the state directory's manifest
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                ids.toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--state-dir",
                                state.toString(),
                                "--fpp",
                                "0.02"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("was written with --fpp 0.01");
        // and so is a bootstrap into a dedup's directory of another --fpp
        Path other = tmp.resolve("other");
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                other.toString(),
                                "--fpp",
                                "0.02",
                                "--exact"))
                .as(cli.err.toString())
                .isZero();
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                other.toString(),
                                "--fpp",
                                "0.01"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("was written with --exact");
    }

    @Test
    void refusesUnknownAndEventTimeFlags() throws Exception {
        Path ids = file("ids.txt", List.of("a"));
        String dir = tmp.resolve("s").toString();
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                dir,
                                "--fppp",
                                "0.1"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains("Unknown options: '--fppp'")
                .contains("did you mean --fpp?");
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--ids",
                                ids.toString(),
                                "--state-dir",
                                dir,
                                "--format",
                                "json",
                                "--id-field",
                                "id",
                                "--time-field",
                                "ts"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("bootstrap takes no --time-field");
        assertThat(cli.run("bootstrap", "--ids", ids.toString())).isEqualTo(2);
        assertThat(cli.err.toString()).contains("--state-dir").contains("--savepoint-dir");
    }

    private static String json(String key, String id) {
        return "{\"key\":\"" + key + "\",\"id\":\"" + id + "\"}";
    }

    private static String idOf(String json) {
        return json.split("\"id\":\"")[1].split("\"")[0];
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
