package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Await;
import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.KafkaBroker;
import io.bloomstream.jobs.console.Interrupts;
import io.bloomstream.jobs.io.StateDir;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@code --state-dir}: a later run resumes from what the last one remembered (the next
 * day's file, the same path rewritten, Kafka after a stop), Ctrl-C stops with the state kept, and a
 * directory of another command or other settings is refused with the setting named.
 *
 * <p>The filters use the fixed seed and {@code --fpp 1e-6}: which ids are false positives is then
 * fixed by the ids, and for these few thousand ids there is none, so the expected outputs are
 * exact.
 */
class StateDirITCase {

    /** How long a run may take to reach a point, and how often it is checked. */
    private static final Duration WAIT = Duration.ofSeconds(120);

    private static final Duration POLL = Duration.ofMillis(50);

    @TempDir Path tmp;

    private static List<String> ids(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "id-" + i).collect(Collectors.toList());
    }

    /** Each id of [from, to) twice, in an order that is not sorted. */
    private Path file(String name, int from, int to) throws Exception {
        List<String> lines = new ArrayList<>(ids(from, to));
        lines.addAll(ids(from, to));
        java.util.Collections.shuffle(lines, new java.util.Random(from * 31L + to));
        Path f = tmp.resolve(name);
        Files.write(f, lines, StandardCharsets.UTF_8);
        return f;
    }

    private static int dedup(Cli cli, Path state, Path input, Path output, String... more) {
        List<String> args = new ArrayList<>(List.of("dedup", "--quiet", "--fpp", "1e-6"));
        args.addAll(List.of("--state-dir", state.toString()));
        args.addAll(List.of("--input", input.toString(), "--output", output.toString()));
        args.addAll(List.of(more));
        return cli.run(args.toArray(new String[0]));
    }

    @Test
    void dayTwoPassesNoIdOfDayOneAndTheSamePathIsReadAgain() throws Exception {
        Path state = tmp.resolve("state");
        Cli day1 = new Cli();
        assertThat(dedup(day1, state, file("day1.txt", 0, 2000), tmp.resolve("out1")))
                .as(day1.err.toString())
                .isZero();
        assertThat(day1.err.toString()).contains("state: new").contains("state: saved in");
        // the part files are committed (visible) when the run ends
        assertThat(Cli.readParts(tmp.resolve("out1")))
                .containsExactlyInAnyOrderElementsOf(ids(0, 2000));

        Cli day2 = new Cli();
        Path today = file("today.txt", 1000, 3000);
        assertThat(dedup(day2, state, today, tmp.resolve("out2"))).as(day2.err.toString()).isZero();
        assertThat(day2.err.toString()).contains("state: resuming from");
        assertThat(Cli.readParts(tmp.resolve("out2")))
                .containsExactlyInAnyOrderElementsOf(ids(2000, 3000));
        // day 1's output untouched (Flink's FileSink restores its buckets with their directory)
        assertThat(Cli.readParts(tmp.resolve("out1"))).hasSize(2000);

        // Day 3 rewrites the same path: read again in full (the file source starts afresh).
        Files.delete(today);
        file("today.txt", 2500, 4000);
        Cli day3 = new Cli();
        assertThat(dedup(day3, state, today, tmp.resolve("out3"))).as(day3.err.toString()).isZero();
        assertThat(Cli.readParts(tmp.resolve("out3")))
                .containsExactlyInAnyOrderElementsOf(ids(3000, 4000));
        // one savepoint kept, older ones and the runs' checkpoints deleted
        try (var saved = Files.list(state.resolve("savepoints"))) {
            assertThat(saved.count()).isOne();
        }
    }

    @Test
    void refusesOtherSettingsAnotherCommandAndAForeignDirectory() throws Exception {
        Path state = tmp.resolve("state");
        Path input = file("in.txt", 0, 100);
        Cli first = new Cli();
        assertThat(dedup(first, state, input, tmp.resolve("out1")))
                .as(first.err.toString())
                .isZero();

        Cli other = new Cli();
        assertThat(dedup(other, state, input, tmp.resolve("out2"), "--expected-items", "5000"))
                .isEqualTo(2);
        assertThat(other.err.toString())
                .contains("was written with --expected-items 1000000")
                .contains("this run has --expected-items 5000");
        assertThat(tmp.resolve("out2")).doesNotExist();

        Cli json = new Cli();
        assertThat(
                        dedup(
                                json,
                                state,
                                input,
                                tmp.resolve("out2"),
                                "--format",
                                "json",
                                "--id-field",
                                "id"))
                .isEqualTo(2);
        assertThat(json.err.toString()).contains("--format text").contains("--format json");

        Cli frontier = new Cli();
        assertThat(
                        frontier.run(
                                "frontier",
                                "--state-dir",
                                state.toString(),
                                "--input",
                                input.toString(),
                                "--output",
                                tmp.resolve("out3").toString()))
                .isEqualTo(2);
        assertThat(frontier.err.toString())
                .contains("holds the state of 'dedup', not of 'frontier'");

        Path foreign = Files.createDirectories(tmp.resolve("foreign"));
        Files.writeString(foreign.resolve("notes.txt"), "mine");
        Cli refused = new Cli();
        assertThat(dedup(refused, foreign, input, tmp.resolve("out4"))).isEqualTo(2);
        assertThat(refused.err.toString()).contains("is not empty and has no " + StateDir.MANIFEST);

        Path newer = tmp.resolve("newer");
        Files.createDirectories(newer);
        Files.writeString(newer.resolve(StateDir.MANIFEST), "format=2\ncommand=dedup\n");
        Cli future = new Cli();
        assertThat(dedup(future, newer, input, tmp.resolve("out5"))).isEqualTo(2);
        assertThat(future.err.toString()).contains("has format 2, this version reads format 1");
    }

    /**
     * Ctrl-C through the path the signal handler takes ({@link Interrupts#interrupt}), as soon as
     * the run is in progress: the run stops with its state saved and says so; running the same file
     * again writes exactly the ids the first run did not, so every id is written once in all.
     */
    @Test
    void interruptStopsWithTheStateKept() throws Exception {
        Path state = tmp.resolve("state");
        Path input = file("big.txt", 0, 50_000);
        Cli first = new Cli();
        CompletableFuture<Integer> run =
                CompletableFuture.supplyAsync(
                        () ->
                                dedup(
                                        first,
                                        state,
                                        input,
                                        tmp.resolve("out1"),
                                        "--parallelism",
                                        "1"));
        Await.until(
                "the run to take the interrupt",
                WAIT,
                POLL,
                () -> run.isDone() || Interrupts.interrupt());
        assertThat(run.get(120, TimeUnit.SECONDS)).as(first.err.toString()).isZero();
        assertThat(first.err.toString())
                .contains("stopping: saving the state to " + state)
                .contains("state: saved in " + state);

        Cli second = new Cli();
        assertThat(dedup(second, state, input, tmp.resolve("out2")))
                .as(second.err.toString())
                .isZero();
        // a run stopped before its first record wrote nothing, not even its directory; nor did a
        // second run when the first had read the whole file before the interrupt was taken
        List<String> out1 = partsIfAny(tmp.resolve("out1"));
        List<String> out2 = partsIfAny(tmp.resolve("out2"));
        List<String> all = new ArrayList<>(out1);
        all.addAll(out2);
        assertThat(all).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(ids(0, 50_000));
    }

    private static List<String> partsIfAny(Path dir) throws java.io.IOException {
        return Files.isDirectory(dir) ? Cli.readParts(dir) : List.of();
    }

    /**
     * {@code kill -9} in the middle of a file run: the next run says it recovers from the dead
     * run's checkpoint (naming its pid), removes the part files the dead run left in progress, and
     * the two outputs together hold every id once. The killed run is a child JVM, killed once a
     * checkpoint is complete and it has written a part file in progress after it (lines reach the
     * files in blocks of 64 KiB, and all of them at each checkpoint: the input is large enough for
     * blocks between checkpoints). With {@code --fpp 1e-6} and room for a million ids, the expected
     * number of false positives among these 600,000 ids is below 0.6 (the filters stay below their
     * capacity): more than 6 missing ids would mean a lost record, not bad luck (Poisson(0.6)
     * exceeds 6 with probability below 4e-6).
     */
    @Test
    void aKilledRunIsRecoveredFromItsCheckpointAndItsInProgressFilesRemoved() throws Exception {
        Path state = tmp.resolve("state");
        Path input = file("big.txt", 0, 600_000);
        Path out = tmp.resolve("out");
        String[] args = {
            "dedup",
            "--quiet",
            "--fpp",
            "1e-6",
            "--checkpoint-interval",
            "200ms",
            "--state-dir",
            state.toString(),
            "--input",
            input.toString(),
            "--output",
            out.toString()
        };
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xmx1g",
                                "-cp",
                                System.getProperty("java.class.path"),
                                io.bloomstream.jobs.Main.class.getName()));
        command.addAll(List.of(args));
        Process dead =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(tmp.resolve("dead.log").toFile())
                        .start();
        try {
            Await.until(
                    "a completed checkpoint and a part file in progress written after it",
                    WAIT,
                    POLL,
                    () ->
                            !dead.isAlive()
                                    || frozenWithAFileAfterItsLastCheckpoint(dead, state, out));
            assertThat(dead.isAlive())
                    .as("the run to kill: %s", Files.readString(tmp.resolve("dead.log")))
                    .isTrue();
        } finally {
            dead.destroyForcibly(); // SIGKILL
            assertThat(dead.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        List<Path> left = inProgress(out);
        assertThat(left).isNotEmpty();

        Cli second = new Cli();
        assertThat(second.run(args)).as(second.err.toString()).isZero();
        assertThat(second.err.toString())
                .contains(
                        "state: recovering from "
                                + state
                                + ": the last run (pid "
                                + dead.pid()
                                + ") was killed or crashed before it saved its state; resuming"
                                + " from its last checkpoint (chk-")
                .contains("state: removed ");
        assertThat(inProgress(out)).isEmpty();
        List<String> all = Cli.readParts(out);
        assertThat(all).doesNotHaveDuplicates();
        Set<String> missing = new LinkedHashSet<>(ids(0, 600_000));
        all.forEach(missing::remove);
        assertThat(missing).hasSizeLessThanOrEqualTo(6);
    }

    /**
     * Whether the run, stopped with SIGSTOP (its mini-cluster too: no checkpoint completes while it
     * is stopped), has a part file in progress written after its newest checkpoint; if not, it is
     * continued. A file closed at the barrier of a checkpoint that has not completed stays in
     * progress until the restore, which resumes from the checkpoint before: it is removed.
     */
    private static boolean frozenWithAFileAfterItsLastCheckpoint(
            Process run, Path state, Path out) {
        if (!writtenAfterLastCheckpoint(state, out)) {
            return false;
        }
        signal("STOP", run);
        if (writtenAfterLastCheckpoint(state, out)) {
            return true; // killed stopped
        }
        signal("CONT", run);
        return false;
    }

    private static void signal(String name, Process process) {
        try {
            int status =
                    new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                            .start()
                            .waitFor();
            assertThat(status).as("kill -%s", name).isZero();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Whether a part file in {@code out} was written after the newest checkpoint's metadata. */
    private static boolean writtenAfterLastCheckpoint(Path state, Path out) {
        long checkpoint;
        try (var files = Files.walk(state.resolve("checkpoints"), 3)) {
            checkpoint =
                    files.filter(p -> p.getFileName().toString().equals("_metadata"))
                            .mapToLong(StateDirITCase::modified)
                            .max()
                            .orElse(Long.MAX_VALUE);
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return false; // not there yet, or a checkpoint being replaced
        }
        return inProgress(out).stream().anyMatch(f -> modified(f) > checkpoint);
    }

    private static long modified(Path p) {
        try {
            return Files.getLastModifiedTime(p).to(TimeUnit.NANOSECONDS);
        } catch (java.io.IOException e) {
            return Long.MIN_VALUE; // gone meanwhile (committed or removed)
        }
    }

    private static List<Path> inProgress(Path dir) {
        try (var files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().contains(".inprogress."))
                    .collect(Collectors.toList());
        } catch (java.io.IOException e) {
            return List.of(); // not there yet
        }
    }

    /**
     * Kafka: a run stopped by Ctrl-C, then another over more events with repeats of the first ones,
     * stopped the same way: every id once on the output topic (offsets and filters restored
     * together). {@code --bounded} is refused with a state directory.
     */
    @Test
    void kafkaResumesWithNothingTwice() throws Exception {
        try (KafkaBroker kafka = new KafkaBroker(Files.createDirectories(tmp.resolve("kafka")))) {
            kafka.start();
            kafka.createTopics(2, "events", "unique");
            kafka.produce("events", bytes(ids(0, 3000)));
            Path state = tmp.resolve("state");
            String[] args = {
                "dedup",
                "--quiet",
                "--fpp",
                "1e-6",
                "--state-dir",
                state.toString(),
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--input-topic",
                "events",
                "--output-topic",
                "unique",
                "--group-id",
                "state-it"
            };
            Cli first = new Cli();
            CompletableFuture<Integer> run = CompletableFuture.supplyAsync(() -> first.run(args));
            Await.until(
                    "run 1 to consume the events",
                    WAIT,
                    POLL,
                    () -> run.isDone() || kafka.consumedAll("state-it", "events"));
            assertThat(Interrupts.interrupt()).isTrue();
            assertThat(run.get(120, TimeUnit.SECONDS)).as(first.err.toString()).isZero();
            assertThat(first.err.toString()).contains("state: saved in");

            kafka.produce("events", bytes(ids(2000, 5000)));
            Cli second = new Cli();
            CompletableFuture<Integer> run2 = CompletableFuture.supplyAsync(() -> second.run(args));
            Await.until(
                    "run 2 to consume the events",
                    WAIT,
                    POLL,
                    () -> run2.isDone() || kafka.consumedAll("state-it", "events"));
            assertThat(Interrupts.interrupt()).isTrue();
            assertThat(run2.get(120, TimeUnit.SECONDS)).as(second.err.toString()).isZero();
            assertThat(second.err.toString()).contains("state: resuming from");

            List<String> bounded = new ArrayList<>(List.of(args));
            bounded.add("--bounded");
            Cli refused = new Cli();
            assertThat(refused.run(bounded.toArray(new String[0]))).isEqualTo(2);
            assertThat(refused.err.toString()).contains("--bounded cannot resume from --state-dir");

            List<String> out = kafka.readCommitted("unique");
            assertThat(out)
                    .doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(ids(0, 5000));
        }
    }

    private static List<byte[]> bytes(List<String> lines) {
        Set<String> set = new LinkedHashSet<>(lines);
        List<byte[]> out = new ArrayList<>();
        for (String l : set) {
            out.add(l.getBytes(StandardCharsets.UTF_8));
        }
        out.addAll(new ArrayList<>(out)); // each twice
        return out;
    }
}
