package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code kill -9} for the crash-recovery ITs: a command run in a child JVM, killed after a
 * checkpoint, and the comparison of its outputs with an uninterrupted run's.
 */
public final class Kills {

    private static final Duration WAIT = Duration.ofSeconds(180);
    private static final Duration POLL = Duration.ofMillis(20);

    private Kills() {}

    /**
     * Starts {@code bloomstream ARGS} in a child JVM (its output in {@code log}) and kills it
     * ({@code SIGKILL}) {@code delayMillis} after a checkpoint under {@code checkpoints} completed
     * (one newer than any there before); asserts it was still running then.
     */
    public static void killAfterACheckpoint(
            List<String> args, Path checkpoints, Path log, int delayMillis) throws Exception {
        long before = newestCheckpoint(checkpoints);
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xmx1g",
                                "-cp",
                                System.getProperty("java.class.path"),
                                Main.class.getName()));
        command.addAll(args);
        Process run =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        try {
            Await.until(
                    "a checkpoint of the run to kill",
                    WAIT,
                    POLL,
                    () -> !run.isAlive() || newestCheckpoint(checkpoints) > before);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
            while (System.nanoTime() < deadline && run.isAlive()) {
                Thread.onSpinWait();
            }
            assertThat(run.isAlive())
                    .as("the run to kill (%d ms after its checkpoint): %s", delayMillis, read(log))
                    .isTrue();
        } finally {
            run.destroyForcibly(); // SIGKILL
            assertThat(run.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /**
     * The modification time of the newest checkpoint's metadata under {@code checkpoints} ({@code
     * JOBID/chk-N/_metadata}), or 0.
     */
    public static long newestCheckpoint(Path checkpoints) {
        try (var files = Files.walk(checkpoints, 3)) {
            return files.filter(p -> p.getFileName().toString().equals("_metadata"))
                    .mapToLong(
                            p -> {
                                try {
                                    return Files.getLastModifiedTime(p).toMillis();
                                } catch (java.io.IOException e) {
                                    return 0;
                                }
                            })
                    .max()
                    .orElse(0);
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return 0; // not there yet, or a checkpoint being replaced
        }
    }

    /**
     * How many lines of sorted {@code a} are not matched in sorted {@code b}, duplicates counted,
     * with the first few of them; empty when none.
     */
    public static String excess(List<String> a, List<String> b) {
        List<String> first = new ArrayList<>();
        long n = 0;
        int j = 0;
        for (String line : a) {
            while (j < b.size() && b.get(j).compareTo(line) < 0) {
                j++;
            }
            if (j < b.size() && b.get(j).equals(line)) {
                j++;
            } else {
                n++;
                if (first.size() < 5) {
                    first.add(line);
                }
            }
        }
        return n == 0 ? "" : n + " lines, among them " + first;
    }

    /** A sorted copy. */
    public static List<String> sorted(List<String> lines) {
        List<String> s = new ArrayList<>(lines);
        Collections.sort(s);
        return s;
    }
}
