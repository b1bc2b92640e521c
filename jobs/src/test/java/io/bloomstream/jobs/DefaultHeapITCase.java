package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests {@link DefaultHeap} as a user meets it: {@code java -jar bloomstream.jar} started without a
 * heap size runs the command in a child JVM with the default heap, passes on its exit status, and
 * leaves no child behind when it is killed.
 */
class DefaultHeapITCase {

    private static final Pattern MAX_HEAP = Pattern.compile("max heap (\\d+) MiB");

    @TempDir Path tmp;

    private record Run(int status, String out, String err) {}

    private ProcessBuilder jar(Map<String, String> env, List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-jar");
        Path jar = Path.of(System.getProperty("bloomstream.localJar", "target/bloomstream.jar"));
        assertThat(jar).as("built by package").exists();
        command.add(jar.toAbsolutePath().toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        for (String v :
                List.of(
                        "JAVA_TOOL_OPTIONS",
                        "JDK_JAVA_OPTIONS",
                        "_JAVA_OPTIONS",
                        DefaultHeap.ENV,
                        DefaultHeap.MARKER)) {
            pb.environment().remove(v);
        }
        pb.environment().putAll(env);
        return pb;
    }

    private Run run(Map<String, String> env, List<String> jvmOptions, String... args)
            throws Exception {
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        Process p =
                jar(env, jvmOptions, args)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile())
                        .start();
        p.getOutputStream().close();
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("finished in 2 minutes").isTrue();
        return new Run(
                p.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private static long maxHeapMiB(Run run) {
        Matcher m = MAX_HEAP.matcher(run.out);
        assertThat(m.find()).as("--version: %s%s", run.out, run.err).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void withoutAHeapSizeTheCommandRunsWithTheDefaultOrTheVariablesHeap() throws Exception {
        Run byDefault = run(Map.of(), List.of(), "--version");
        assertThat(byDefault.status).as(byDefault.err).isZero();
        // -Xmx1g: 1024 MiB with G1, a little less with a collector that keeps a survivor apart
        assertThat(maxHeapMiB(byDefault)).isBetween(900L, 1024L);

        Run set = run(Map.of(DefaultHeap.ENV, "300m"), List.of(), "--version");
        assertThat(set.status).as(set.err).isZero();
        assertThat(maxHeapMiB(set)).isBetween(250L, 300L);
    }

    @Test
    void anExplicitHeapIsKept() throws Exception {
        Run explicit = run(Map.of(DefaultHeap.ENV, "300m"), List.of("-Xmx200m"), "--version");
        assertThat(explicit.status).as(explicit.err).isZero();
        assertThat(maxHeapMiB(explicit)).isBetween(150L, 200L);

        Run tool = run(Map.of("JAVA_TOOL_OPTIONS", "-Xmx180m"), List.of(), "--version");
        assertThat(tool.status).as(tool.err).isZero();
        assertThat(maxHeapMiB(tool)).isBetween(130L, 180L);
    }

    @Test
    void theChildsExitStatusIsTheCommands() throws Exception {
        Run usage = run(Map.of(), List.of(), "no-such-command");
        assertThat(usage.status).isEqualTo(2);
        assertThat(usage.err).startsWith("error: Unmatched argument");
        assertThat(usage.out).isEmpty();

        Run badHeap = run(Map.of(DefaultHeap.ENV, "lots"), List.of(), "--version");
        assertThat(badHeap.status).isEqualTo(2);
        assertThat(badHeap.err)
                .isEqualTo(
                        "error: BLOOMSTREAM_HEAP must be a heap size such as 512m or 2g, was"
                                + " 'lots'"
                                + System.lineSeparator());
    }

    @Test
    void killingTheLauncherEndsTheChild() throws Exception {
        // build-filter reads a pipe to its end: a FIFO this test holds open, so the child waits
        // for more (stdin would not do: the launcher's is closed when it dies)
        Path fifo = tmp.resolve("list.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        java.io.RandomAccessFile writer = new java.io.RandomAccessFile(fifo.toFile(), "rw");
        Process launcher =
                jar(
                                Map.of(),
                                List.of(),
                                "build-filter",
                                "--input",
                                fifo.toString(),
                                "--output",
                                tmp.resolve("f.bloom").toString(),
                                "--fpp",
                                "0.01")
                        .redirectOutput(tmp.resolve("out").toFile())
                        .redirectError(tmp.resolve("err").toFile())
                        .start();
        List<ProcessHandle> started = new ArrayList<>();
        try {
            Await.until(
                    "the launcher to start its child",
                    Duration.ofMinutes(1),
                    Duration.ofMillis(50),
                    () -> launcher.children().findAny().isPresent() || !launcher.isAlive());
            Optional<ProcessHandle> child = launcher.children().findAny();
            assertThat(child).as(Files.readString(tmp.resolve("err"))).isPresent();
            started.add(child.get());
            assertThat(child.get().info().commandLine().orElse("")).contains("-Xmx1g");

            assertThat(launcher.isAlive()).as(Files.readString(tmp.resolve("err"))).isTrue();
            assertThat(child.get().isAlive()).as(Files.readString(tmp.resolve("err"))).isTrue();

            launcher.destroyForcibly(); // SIGKILL: the launcher's hooks do not run
            assertThat(launcher.waitFor(1, TimeUnit.MINUTES)).isTrue();
            assertThat(launcher.exitValue()).as("killed by SIGKILL").isEqualTo(128 + 9);
            // without the launcher, it would wait for the rest of its input for ever
            child.get().onExit().get(1, TimeUnit.MINUTES);
            assertThat(child.get().isAlive()).isFalse();
            assertThat(tmp.resolve("f.bloom")).doesNotExist();
        } finally {
            started.forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
            writer.close();
        }
    }
}
