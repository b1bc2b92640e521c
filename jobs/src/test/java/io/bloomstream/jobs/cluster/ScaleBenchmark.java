package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale benchmark (issue 44): each contender of {@link ScaleJob} runs alone on a fresh
 * standalone cluster of separate JVMs (a JobManager and two TaskManagers of one slot each, 4 GiB
 * processes with Flink's default share of managed memory for RocksDB), submitted with {@code flink
 * run} at parallelism 2, on RocksDB with incremental checkpoints every 10 s, over {@code 2 *
 * distinct} string ids (each twice, in random order). It records, at each step of the events read
 * (1, 2 and 5 times each power of ten below the step, then every step: 10^6 events below 10^8
 * distinct ids, 10^7 from there), the rate over the step, the distinct ids so far, the latest
 * completed checkpoint (its full state size, what it uploaded, its duration) and the resident
 * memory of each TaskManager; and every completed checkpoint.
 *
 * <p>Midway (when half the events are read, or half the time budget is spent), it kills one
 * TaskManager with SIGKILL and starts a replacement, as a supervisor would, and measures from the
 * kill: until every subtask is RUNNING again (its state restored), until records flow again past
 * the restored point, and until the events read are back where they were at the kill.
 *
 * <p>Contenders that are exact may stop at the time budget (Bloom ones at three budgets, a safety
 * net): they are then stopped with a native savepoint (which commits the sink's output up to
 * there). Afterwards it reads the committed output and checks it: no id twice (the sink is exactly
 * once, across the kill), and for a finished run no id missing beyond the filter's rate ({@code fpp
 * * distinct}) for Bloom contenders, none for exact ones.
 *
 * <p>Settings: {@code -Dbloomstream.scale.distinct} (default 10^7), {@code
 * -Dbloomstream.scale.budgetSeconds} (default 90), {@code -Dbloomstream.scale.contenders} (comma
 * separated, default all), {@code -Dbloomstream.scale.out} (CSV directory, default target/scale),
 * {@code -Dbloomstream.scale.seed}, {@code -Dbloomstream.scale.jfr=true} (a JFR profile of each
 * TaskManager that is not killed, in target/scale-logs-N/). Run by the {@code scale} profile
 * (benchmarks/scale/run.sh), never by the default build.
 */
class ScaleBenchmark {

    static final long DISTINCT = Long.getLong("bloomstream.scale.distinct", 10_000_000L);
    static final long BUDGET_MS = 1000 * Long.getLong("bloomstream.scale.budgetSeconds", 90L);
    static final long SEED = Long.getLong("bloomstream.scale.seed", 44L);
    static final double FPP = 0.01;
    static final List<String> CONTENDERS =
            Arrays.asList(
                    System.getProperty(
                                    "bloomstream.scale.contenders",
                                    String.join(",", ScaleJob.CONTENDERS))
                            .split(","));
    static final Path OUT =
            Path.of(System.getProperty("bloomstream.scale.out", "target/scale")).toAbsolutePath();
    static final long RECOVERY_TIMEOUT_MS = 600_000;

    @Test
    void scale(@TempDir(cleanup = CleanupMode.ALWAYS) Path tmp) throws Exception {
        Path jobJar =
                Path.of(
                                System.getProperty(
                                        "bloomstream.jobJar", "target/bloomstream-flink-job.jar"))
                        .toAbsolutePath();
        assertThat(jobJar).as("the slim job jar (built by package)").exists();
        Path scaleJar = scaleJar(tmp.resolve("scale-job.jar"));
        Files.createDirectories(OUT);
        String prefix = "scale-" + DISTINCT;
        Csv steps =
                new Csv(
                        OUT.resolve(prefix + "-steps.csv"),
                        "contender,events,distinct_ids,seconds,rate_per_s,recovery_step,"
                                + "checkpoint_full_bytes,checkpoint_incremental_bytes,"
                                + "checkpoint_ms,tm_a_rss_bytes,tm_b_rss_bytes");
        Csv checkpoints =
                new Csv(
                        OUT.resolve(prefix + "-checkpoints.csv"),
                        "contender,checkpoint,events,distinct_ids,full_bytes,incremental_bytes,"
                                + "duration_ms");
        Csv recoveries =
                new Csv(
                        OUT.resolve(prefix + "-recovery.csv"),
                        "contender,killed_at_events,killed_at_distinct_ids,restored_events,"
                                + "restored_checkpoint_bytes,"
                                + "running_ms,flowing_ms,caught_up_ms");
        Csv summary =
                new Csv(
                        OUT.resolve(prefix + "-summary.csv"),
                        "contender,distinct,finished,events,seconds,output_ids,passed_twice,"
                                + "missing,missing_bound");
        List<String> failures = new ArrayList<>();
        for (String contender : CONTENDERS) {
            Path dir = Files.createDirectories(tmp.resolve(contender));
            ScaleRun run = new ScaleRun(contender, dir, jobJar, scaleJar);
            try {
                run.execute();
            } finally {
                run.steps.forEach(
                        s ->
                                steps.row(
                                        contender,
                                        s.events(),
                                        s.distinct(),
                                        fmt(s.seconds()),
                                        fmt(s.rate()),
                                        s.recovery(),
                                        s.stateBytes(),
                                        s.uploadedBytes(),
                                        s.checkpointMs(),
                                        s.tmRssA(),
                                        s.tmRssB()));
                run.checkpoints
                        .values()
                        .forEach(
                                c ->
                                        checkpoints.row(
                                                contender,
                                                c.id(),
                                                c.events(),
                                                c.distinct(),
                                                c.stateBytes(),
                                                c.uploadedBytes(),
                                                c.ms()));
                if (run.recovery != null) {
                    ScaleRun.Recovery r = run.recovery;
                    recoveries.row(
                            contender,
                            r.killedAtEvents(),
                            r.killedAtDistinct(),
                            r.restoredEvents(),
                            r.restoredStateBytes(),
                            r.runningMs(),
                            r.flowingMs(),
                            r.caughtUpMs());
                }
                copyLogs(
                        dir,
                        Path.of("target", "scale-logs-" + DISTINCT, contender).toAbsolutePath());
            }
            Output out = Output.read(dir.resolve("output"));
            long missing = run.finished ? DISTINCT - out.distinct : -1;
            // a Bloom contender may drop a first occurrence as a false positive, at most at its
            // rate
            boolean bloom = !run.exact() && !run.passThrough();
            long bound = !run.finished ? -1 : bloom ? (long) (FPP * DISTINCT) : 0;
            // the pass-through writes every event: each id twice once it finished
            long twiceExpected = run.passThrough() && run.finished ? DISTINCT : 0;
            summary.row(
                    contender,
                    DISTINCT,
                    run.finished,
                    run.events,
                    fmt(run.seconds),
                    out.distinct,
                    out.twice,
                    missing,
                    bound);
            System.out.printf(
                    Locale.ROOT,
                    "%-20s %s after %.0f s: %,d events, %,d ids written, %,d twice, %s missing"
                            + " (bound %s); recovery %s%n",
                    contender,
                    run.finished ? "finished" : "stopped at budget",
                    run.seconds,
                    run.events,
                    out.distinct,
                    out.twice,
                    missing < 0 ? "-" : String.format(Locale.ROOT, "%,d", missing),
                    bound < 0 ? "-" : String.format(Locale.ROOT, "%,d", bound),
                    run.recovery);
            boolean twiceAsPromised =
                    run.passThrough()
                            ? !run.finished || out.twice == twiceExpected
                            : out.twice == 0;
            if (!twiceAsPromised || out.thrice != 0 || out.malformed != 0) {
                failures.add(
                        contender
                                + ": "
                                + out.twice
                                + " ids twice, "
                                + out.thrice
                                + " three times or more, "
                                + out.malformed
                                + " bad lines");
            }
            if (run.finished && missing > bound) {
                failures.add(contender + ": " + missing + " ids missing, bound " + bound);
            }
            if (run.recovery == null) {
                failures.add(contender + ": no TaskManager was killed");
            }
            deleteTree(dir);
        }
        assertThat(failures).as("exactly once, nothing lost beyond the filter's rate").isEmpty();
    }

    /** A jar of {@link ScaleJob}'s classes, for {@code flink run -C}. */
    static Path scaleJar(Path jar) throws IOException {
        Path classes =
                Path.of(
                        ScaleJob.class
                                .getProtectionDomain()
                                .getCodeSource()
                                .getLocation()
                                .getPath());
        String pkg = ScaleJob.class.getPackageName().replace('.', '/');
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream jarOut = new JarOutputStream(out);
                Stream<Path> files = Files.list(classes.resolve(pkg))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.equals("ScaleJob.class") || name.startsWith("ScaleJob$")) {
                    jarOut.putNextEntry(new JarEntry(pkg + "/" + name));
                    Files.copy(f, jarOut);
                    jarOut.closeEntry();
                }
            }
        }
        return jar;
    }

    /**
     * The distinct ids among the first {@code events} of the stream, as expected: an id is not
     * among them when neither of its two positions, random among {@code 2 * DISTINCT}, is. (Their
     * count is a sum of {@code DISTINCT} such events, so its standard deviation is below {@code
     * sqrt(DISTINCT) / 2}: 0.016% of 10^7.) The ids passed, which the gauge shows, lag this by the
     * Bloom filter's false positives and by the time between two samples.
     */
    static long distinctAfter(long events) {
        double n2 = 2.0 * DISTINCT;
        double none = (n2 - events) / n2 * Math.max(0, n2 - events - 1) / (n2 - 1);
        return Math.round(DISTINCT * (1 - none));
    }

    /** The resident set of process {@code pid}, in bytes (0 when gone). */
    static long rss(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /**
     * The committed output: ids read, how many of them twice, how many a third time or more, lines
     * that are not ids.
     */
    static final class Output {
        long distinct;
        long twice;
        long thrice;
        long malformed;

        static Output read(Path dir) throws IOException {
            Output o = new Output();
            BitSet seen = new BitSet((int) Math.min(Integer.MAX_VALUE, DISTINCT));
            BitSet seenTwice = new BitSet((int) Math.min(Integer.MAX_VALUE, DISTINCT));
            if (!Files.isDirectory(dir)) {
                return o;
            }
            List<Path> parts;
            try (Stream<Path> s = Files.walk(dir)) {
                parts =
                        s.filter(Files::isRegularFile)
                                .filter(f -> !f.getFileName().toString().startsWith("."))
                                .toList();
            }
            for (Path part : parts) {
                try (BufferedReader r = Files.newBufferedReader(part, StandardCharsets.UTF_8)) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        long id = ScaleJob.idOf(line);
                        if (id < 0 || id >= DISTINCT) {
                            o.malformed++;
                        } else if (seenTwice.get((int) id)) {
                            o.thrice++; // a third time or more
                        } else if (seen.get((int) id)) {
                            seenTwice.set((int) id);
                            o.twice++;
                        } else {
                            seen.set((int) id);
                            o.distinct++;
                        }
                    }
                }
            }
            return o;
        }
    }

    /** A CSV file written row by row (so a failed run keeps the rows before it). */
    static final class Csv {
        private final Path file;

        Csv(Path file, String header) throws IOException {
            this.file = file;
            Files.writeString(file, header + "\n");
        }

        void row(Object... cells) {
            StringBuilder b = new StringBuilder();
            for (Object c : cells) {
                b.append(b.length() == 0 ? "" : ",").append(c);
            }
            try {
                Files.writeString(file, b + "\n", StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    static String fmt(double d) {
        return String.format(Locale.ROOT, "%.1f", d);
    }

    static void copyLogs(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path f : (Iterable<Path>) s::iterator) {
                String name = f.getFileName().toString();
                if (name.endsWith(".log") || name.endsWith(".jfr")) {
                    Files.copy(
                            f,
                            to.resolve(f.getFileName()),
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p :
                    (Iterable<Path>) s.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
