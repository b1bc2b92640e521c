package io.bloomstream.jobs.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Await;
import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.console.Interrupts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sql --state-dir}: a script whose job reads a directory continuously and writes the {@code
 * BLOOM_DEDUP} of its ids is stopped with Ctrl-C, a file with repeats of the first one's ids is
 * added, and the same script run again resumes: every id is written once over both runs. A job that
 * runs to its end keeps nothing; the bad combinations are refused.
 *
 * <p>{@code fpp} 1e-6 over 1,500 ids: the chance of any false positive is about 0.0015, and which
 * ids collide is fixed by the ids (fixed seed), so the expected output is exact.
 */
class SqlStateDirITCase {

    private static final Duration WAIT = Duration.ofSeconds(120);

    private static final Duration POLL = Duration.ofMillis(100);

    @TempDir Path tmp;

    private static List<String> ids(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "id-" + i).collect(Collectors.toList());
    }

    /** Each id of [from, to) twice, as JSON lines, in an order that is not sorted. */
    private void file(Path dir, String name, int from, int to) throws Exception {
        List<String> lines = new ArrayList<>();
        for (String id : ids(from, to)) {
            lines.add("{\"id\": \"" + id + "\"}");
            lines.add("{\"id\": \"" + id + "\"}");
        }
        java.util.Collections.shuffle(lines, new java.util.Random(from * 31L + to));
        Path tmpFile = tmp.resolve(name + ".tmp");
        Files.write(tmpFile, lines, StandardCharsets.UTF_8);
        Files.move(tmpFile, dir.resolve(name)); // whole, as a file source must see it
    }

    private String script(Path in, Path out) {
        return "CREATE TABLE ids (id STRING) WITH ('connector' = 'filesystem', 'format' = 'json',"
                + " 'path' = '"
                + in.toUri()
                + "', 'source.monitor-interval' = '200 ms');\n"
                + "CREATE TABLE firsts (id STRING) WITH ('connector' = 'filesystem',"
                + " 'format' = 'json', 'sink.rolling-policy.rollover-interval' = '1 s',"
                + " 'sink.rolling-policy.check-interval' = '1 s', 'path' = '"
                + out.toUri()
                + "');\n"
                + "CREATE TEMPORARY VIEW sharded AS SELECT id, BLOOM_SHARD(id, 4) AS shard FROM"
                + " ids;\n"
                + "INSERT INTO firsts SELECT id FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY"
                + " shard, id_column => 'id', expected_items => 1000, fpp => 0.000001,"
                + " uid => 'firsts');\n";
    }

    private static int sql(Cli cli, Path state, String script, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "sql",
                                "--parallelism",
                                "1",
                                "--checkpoint-interval",
                                "1s",
                                "--state-dir",
                                state.toString()));
        args.addAll(List.of(more));
        args.addAll(List.of("-e", script));
        return cli.run(args.toArray(new String[0]));
    }

    /**
     * The ids in the committed part files under {@code out} (json lines). The sink renames files as
     * it commits them, so a listing taken while the job runs may name a file gone by the time it is
     * read: that one is skipped (the caller polls again).
     */
    private static List<String> written(Path out) throws java.io.IOException {
        if (!Files.isDirectory(out)) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> listing = Files.list(out)) {
            files = listing.collect(Collectors.toList());
        }
        for (Path f : files) {
            if (!f.getFileName().toString().startsWith("part-")) {
                continue; // in-progress files start with '.'
            }
            try {
                for (String line : Files.readAllLines(f)) {
                    ids.add(line.replaceAll(".*\"id\":\"([^\"]*)\".*", "$1"));
                }
            } catch (java.nio.file.NoSuchFileException gone) {
                // renamed or removed while listed
            }
        }
        return ids;
    }

    private static int writtenCount(Path out) {
        try {
            return written(out).size();
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return 0; // look again
        }
    }

    /**
     * Runs the script until {@code expected} ids are written, then presses Ctrl-C. However the wait
     * ends, the run is stopped before this returns: a run left going would take the next test's
     * Ctrl-C.
     */
    private Cli runUntil(Path state, String script, Path out, int expected) throws Exception {
        Cli cli = new Cli();
        CompletableFuture<Integer> run =
                CompletableFuture.supplyAsync(() -> sql(cli, state, script));
        try {
            Await.until(
                    expected + " ids written",
                    WAIT,
                    POLL,
                    () -> run.isDone() || writtenCount(out) >= expected);
        } finally {
            Await.until(
                    "the run to take the interrupt",
                    WAIT,
                    POLL,
                    () -> run.isDone() || Interrupts.interrupt());
            run.get(120, TimeUnit.SECONDS);
        }
        assertThat(run.get()).as(cli.err.toString()).isZero();
        return cli;
    }

    @Test
    void aStoppedScriptResumesAndWritesNoIdTwice() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path out = tmp.resolve("out");
        Path state = tmp.resolve("state");
        String script = script(in, out);
        file(in, "a.json", 0, 1000);

        Cli first = runUntil(state, script, out, 1000);
        assertThat(first.err.toString())
                .contains("state: job 1 new, kept in " + state.resolve("job-1"))
                .contains("stopping: saving the state of job 1")
                .contains("state: saved in " + state.resolve("job-1"));
        assertThat(written(out)).containsExactlyInAnyOrderElementsOf(ids(0, 1000));

        file(in, "b.json", 500, 1500); // 500 ids of a.json again, 500 new
        Cli second = runUntil(state, script, out, 1500);
        assertThat(second.err.toString())
                .contains("state: job 1 resuming from " + state.resolve("job-1"))
                .contains("state: saved in");
        List<String> all = written(out);
        assertThat(all).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(ids(0, 1500));
        // one savepoint kept, the older one and the runs' checkpoints deleted
        try (var saved = Files.list(state.resolve("job-1").resolve("savepoints"))) {
            assertThat(saved.count()).isOne();
        }
    }

    @Test
    void aJobThatRunsToItsEndKeepsNothing() throws Exception {
        Path state = tmp.resolve("state");
        String script =
                "CREATE TABLE ids (id BIGINT) WITH ('connector' = 'datagen',"
                        + " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
                        + " 'fields.id.end' = '1000');\n"
                        + "SELECT COUNT(*) FROM ids;";
        for (int run = 0; run < 2; run++) {
            Cli cli = new Cli();
            assertThat(sql(cli, state, script)).as(cli.err.toString()).isZero();
            assertThat(cli.out.toString().strip()).isEqualTo("1000");
            assertThat(cli.err.toString())
                    .contains("state: job 1 new")
                    .contains("state: job 1 ran to its end: nothing to resume");
        }
        assertThat(state.resolve("job-1").resolve("savepoints")).doesNotExist();
        assertThat(state.resolve("job-1").resolve("checkpoints")).doesNotExist();
    }

    @Test
    void refusesACheckpointDirBesideItAndAnotherCommandsDirectory() throws Exception {
        Cli both = new Cli();
        assertThat(
                        sql(
                                both,
                                tmp.resolve("state"),
                                "SELECT 1;",
                                "--checkpoint-dir",
                                tmp.resolve("cp").toString()))
                .isEqualTo(2);
        assertThat(both.err.toString()).contains("--state-dir and --checkpoint-dir: give one");

        Path dedupState = Files.createDirectories(tmp.resolve("dedup-state"));
        Files.writeString(
                dedupState.resolve(io.bloomstream.jobs.io.StateDir.MANIFEST),
                "format=1\ncommand=dedup\n");
        Cli other = new Cli();
        assertThat(sql(other, dedupState, "SELECT 1;")).isEqualTo(2);
        assertThat(other.err.toString()).contains("holds the state of 'dedup', not of 'sql'");
    }
}
