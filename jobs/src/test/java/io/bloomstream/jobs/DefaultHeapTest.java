package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests for {@link DefaultHeap}: when the command line starts itself again, and how. */
class DefaultHeapTest {

    /**
     * Under {@code flink run} the client loads the job jar with a class loader of its own and calls
     * {@code Main.main}: that JVM's class path has no {@code Main}, so a relaunch could not start
     * ("Could not find or load main class"); the command runs where it is called.
     */
    @Test
    void onlyAJvmOfItsOwnRelaunches() throws Exception {
        assertThat(DefaultHeap.ownJvm(ClassLoader.getSystemClassLoader())).isTrue();
        try (var jobJar =
                new java.net.URLClassLoader(
                        new java.net.URL[0], ClassLoader.getSystemClassLoader())) {
            assertThat(DefaultHeap.ownJvm(jobJar)).isFalse();
        }
    }

    @Test
    void everyWayOfSizingTheHeapCountsAsExplicit() {
        for (String option :
                List.of(
                        "-Xmx512m",
                        "-Xms2g",
                        "-XX:MaxHeapSize=536870912",
                        "-XX:InitialHeapSize=1g",
                        "-XX:MaxRAM=4g",
                        "-XX:MaxRAMPercentage=50",
                        "-XX:MinRAMPercentage=50.0",
                        "-XX:InitialRAMPercentage=10",
                        "-XX:MaxRAMFraction=2",
                        "-XX:Flags=.hotspotrc",
                        "-XX:VMOptionsFile=jvm.options")) {
            assertThat(DefaultHeap.setsHeap(List.of("-Dfoo=bar", option))).as(option).isTrue();
            assertThat(DefaultHeap.relaunches(List.of(option), Map.of())).as(option).isFalse();
        }
    }

    @Test
    void otherOptionsLeaveTheHeapToTheJvm() {
        List<String> options =
                List.of("-Dlog4j2.level=INFO", "-XX:+UseG1GC", "-Xss4m", "-XX:MaxMetaspaceSize=1g");
        assertThat(DefaultHeap.setsHeap(options)).isFalse();
        assertThat(DefaultHeap.setsHeap(List.of())).isFalse();
        assertThat(DefaultHeap.relaunches(options, Map.of("PATH", "/usr/bin"))).isTrue();
    }

    @Test
    void aHeapInTheJavaOptionVariablesCounts() {
        for (String variable : List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")) {
            assertThat(DefaultHeap.relaunches(List.of(), Map.of(variable, " -Dx=1  -Xmx2g ")))
                    .as(variable)
                    .isFalse();
            assertThat(DefaultHeap.relaunches(List.of(), Map.of(variable, "-Dx=1")))
                    .as(variable)
                    .isTrue();
        }
    }

    @Test
    void theChildAndADebuggedJvmDoNotStartAgain() {
        assertThat(DefaultHeap.relaunches(List.of(), Map.of(DefaultHeap.MARKER, "123"))).isFalse();
        assertThat(
                        DefaultHeap.relaunches(
                                List.of("-agentlib:jdwp=transport=dt_socket,address=5005"),
                                Map.of()))
                .isFalse();
        assertThat(DefaultHeap.relaunches(List.of("-javaagent:jacoco.jar"), Map.of())).isFalse();
        assertThat(
                        DefaultHeap.relaunches(
                                List.of(), Map.of("JAVA_TOOL_OPTIONS", "-agentpath:/p.so")))
                .isFalse();
    }

    private static String heap(Map<String, String> env, String... args) {
        return DefaultHeap.heap(env, args, f -> -1);
    }

    @Test
    void theHeapIsTheVariablesOrTheCommandsOrTheDefault() {
        assertThat(heap(Map.of(), "sql", "-f", "q.sql")).isEqualTo("1g");
        assertThat(heap(Map.of(DefaultHeap.ENV, " "), "sql")).isEqualTo("1g");
        assertThat(heap(Map.of(), "dedup", "--expected-items", "1e7")).isEqualTo("512m");
        assertThat(heap(Map.of(), "dedup", "--expected-items", "1e7", "--exact")).endsWith("m");
        assertThat(heap(Map.of(DefaultHeap.ENV, "512M"), "dedup", "--exact")).isEqualTo("512m");
        assertThat(heap(Map.of(DefaultHeap.ENV, "4g"), "sql")).isEqualTo("4g");
        for (String bad : List.of("1.5g", "-Xmx1g", "0", "lots", "1gb")) {
            assertThatThrownBy(() -> heap(Map.of(DefaultHeap.ENV, bad), "dedup"))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "BLOOMSTREAM_HEAP must be a heap size such as 512m or 2g, was '"
                                    + bad
                                    + "'");
        }
    }

    @Test
    void aLocalFileHasASizeAndAUriNone(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = java.nio.file.Files.write(dir.resolve("f.bloom"), new byte[42]);
        assertThat(DefaultHeap.localFileBytes(file.toString())).isEqualTo(42);
        assertThat(DefaultHeap.localFileBytes(file.toUri().toString())).isEqualTo(42);
        assertThat(DefaultHeap.localFileBytes(dir.toString())).isEqualTo(-1);
        assertThat(DefaultHeap.localFileBytes(dir.resolve("none").toString())).isEqualTo(-1);
        assertThat(DefaultHeap.localFileBytes("s3://bucket/f.bloom")).isEqualTo(-1);
    }

    @Test
    void theChildRunsTheSameJarOrClassPathWithTheHeap() {
        String[] args = {"sql", "-f", "a b.sql"};
        assertThat(
                        DefaultHeap.command(
                                "/jdk/bin/java",
                                List.of("-Dx=1"),
                                "1g",
                                "bloomstream.jar",
                                "bloomstream.jar",
                                args))
                .containsExactly(
                        "/jdk/bin/java",
                        "-Dx=1",
                        "-Xmx1g",
                        "-jar",
                        "bloomstream.jar",
                        "sql",
                        "-f",
                        "a b.sql");
        assertThat(DefaultHeap.command("java", List.of(), "512m", null, "a.jar:b.jar", args))
                .containsExactly(
                        "java",
                        "-Xmx512m",
                        "-cp",
                        "a.jar:b.jar",
                        "io.bloomstream.jobs.Main",
                        "sql",
                        "-f",
                        "a b.sql");
    }

    @Test
    void theChildGetsTheOptionsTheVariablesDidNotGive() {
        assertThat(
                        DefaultHeap.ownOptions(
                                List.of("-Dfrom.tool=1", "-Dmine=2", "-XX:+UseG1GC"),
                                Map.of(
                                        "JAVA_TOOL_OPTIONS",
                                        "-Dfrom.tool=1",
                                        "JDK_JAVA_OPTIONS",
                                        "-XX:+UseG1GC")))
                .containsExactly("-Dmine=2");
    }
}
