package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tests that the library works as a user takes it: {@code mvn deploy} of the freshly built parent
 * and operators to a file repository, then the {@code examples/} project (outside the reactor)
 * built from that repository with its shade plugin and run with {@code java -cp} on a local
 * mini-cluster, on both Flink lines. Maven is the one that runs this build ({@code maven.home});
 * the examples' build is offline, with a local repository of its own that reads Flink and the
 * plugins from the build's local repository (so nothing is installed there) and bloomstream from
 * the file repository.
 */
class ExamplesITCase {

    @TempDir static Path tmp;
    static Path root;
    static Path repo;

    @BeforeAll
    static void deployTheLibrary() throws Exception {
        root = Cli.testdata().getParent();
        repo = tmp.resolve("repo");
        // What a release does, into a file repository: the parent pom and the operators (jar,
        // sources, javadoc, tests), without their tests (they ran in this build).
        Result r =
                run(
                        root,
                        concat(
                                mvn(),
                                new String[0],
                                // Not offline: the deploy plugin refuses to deploy offline.
                                "-B",
                                "-q",
                                "deploy",
                                "-pl",
                                ".,operators",
                                "-DskipTests",
                                // deploy runs the install phase: not into the build's repository
                                "-Dmaven.install.skip=true",
                                "-Dspotless.check.skip=true",
                                "-Dflink.version=" + System.getProperty("bloomstream.flinkVersion"),
                                "-DaltDeploymentRepository=local::" + repo.toUri()));
        assertThat(r.status).as("mvn deploy:%n%s", r.output).isZero();
        Path deployed = repo.resolve("io/bloomstream/bloomstream-operators");
        try (var files = Files.walk(deployed)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .anyMatch(n -> n.endsWith("-sources.jar"))
                    .anyMatch(n -> n.endsWith("-javadoc.jar"))
                    .anyMatch(n -> n.matches("bloomstream-operators-.*\\d\\.jar"));
        }
    }

    @ParameterizedTest(name = "Flink {0}")
    @ValueSource(strings = {"default", "second"})
    void theExamplesBuildFromTheDeployedLibraryAndRun(String line) throws Exception {
        String flink =
                System.getProperty(
                        line.equals("default")
                                ? "bloomstream.flinkVersion"
                                : "bloomstream.flink2Version");
        Path project = tmp.resolve("examples-" + flink);
        copy(root.resolve("examples"), project);
        Path settings = settings(project);
        String[] common = {
            "-o",
            "-B",
            "-q",
            "-s",
            settings.toString(),
            "-Daether.offline.protocols=file",
            "-Dmaven.repo.local=" + tmp.resolve("m2-" + flink),
            "-Dbloomstream.repo=" + repo.toUri(),
            "-Dbloomstream.version=" + System.getProperty("bloomstream.version"),
            "-Dflink.version=" + flink
        };
        Result build = run(project, concat(mvn(), common, "package"));
        assertThat(build.status)
                .as("examples build on Flink %s:%n%s", flink, build.output)
                .isZero();
        Path jar = project.resolve("target/bloomstream-examples-1.0.jar");
        try (var zip = new java.util.zip.ZipFile(jar.toFile())) {
            assertThat(zip.getEntry("io/bloomstream/flink/dedup/BloomDedup.class")).isNotNull();
            assertThat(zip.getEntry("com/dynatrace/hash4j/hashing/Hashing.class")).isNotNull();
            assertThat(zip.getEntry("org/apache/flink/api/common/JobID.class")).isNull();
        }

        Path cp = project.resolve("target/flink.classpath");
        Result classpath =
                run(
                        project,
                        concat(
                                mvn(),
                                common,
                                "dependency:build-classpath",
                                "-Dmdep.includeScope=provided",
                                "-Dmdep.outputFile=" + cp));
        assertThat(classpath.status).as("classpath:%n%s", classpath.output).isZero();
        String classPath = jar + File.pathSeparator + Files.readString(cp).trim();

        Result ds = java(project, classPath, "io.bloomstream.examples.DataStreamExample");
        assertThat(ds.status).as("DataStreamExample on Flink %s:%n%s", flink, ds.output).isZero();
        assertThat(lines(ds.output, "clean ", "late ", "count "))
                .containsExactly(
                        "clean alice/a1@1000",
                        "clean alice/a2@2000",
                        "clean bob/b1@4000",
                        "clean bob/b2@6000",
                        "count alice 2",
                        "count bob 2",
                        "late alice/a3@1500");
        assertThat(lines(ds.output, "flagged ")).singleElement().asString().contains("mallory");
        // the recipe's logging binding is there: SLF4J 1.7 would otherwise discard every message
        assertThat(ds.output)
                .as("DataStreamExample on Flink %s:%n%s", flink, ds.output)
                .doesNotContain("SLF4J: Defaulting to no-operation")
                .doesNotContain("No SLF4J providers were found");
        // and its configuration keeps Flink's warnings of a local run off the console
        assertThat(noise(ds.output))
                .as("DataStreamExample on Flink %s:%n%s", flink, ds.output)
                .isEmpty();
        assertThat(ds.output).contains("WARN  DedupFunction - Late event");

        Result sql = java(project, classPath, "io.bloomstream.examples.SqlExample");
        assertThat(sql.status).as("SqlExample on Flink %s:%n%s", flink, sql.output).isZero();
        assertThat(lines(sql.output, "dedup ", "count "))
                .containsExactly(
                        "dedup alice a1",
                        "dedup alice a2",
                        "dedup bob b1",
                        "dedup carol c1",
                        "count alice 2",
                        "count bob 1",
                        "count carol 1");
        assertThat(noise(sql.output))
                .as("SqlExample on Flink %s:%n%s", flink, sql.output)
                .isEmpty();
    }

    /**
     * The lines of an example's output that a user should not see: stack traces, and warnings or
     * errors other than the library's own late-event warning (Flink's are at ERROR in the examples'
     * log4j2.properties).
     */
    static List<String> noise(String output) {
        List<String> noise = new ArrayList<>();
        for (String line : output.split("\\R")) {
            boolean stackTrace =
                    line.matches("\\s+at \\S+\\(.*")
                            || line.matches("(Caused by: )?[\\w.$]+(Exception|Error)(: .*)?");
            boolean warning =
                    line.matches("\\d\\d:\\d\\d:\\d\\d (WARN|ERROR) .*")
                            && !line.contains(" WARN  DedupFunction - Late event");
            if (stackTrace || warning) {
                noise.add(line);
            }
        }
        return noise;
    }

    /**
     * Settings for the examples' build: its own local repository reads the build's local repository
     * as a remote one (a file URL), for Flink and the plugins.
     */
    private static Path settings(Path project) throws IOException {
        String m2 = Path.of(System.getProperty("bloomstream.localRepository")).toUri().toString();
        Path settings = project.resolve("settings.xml");
        Files.writeString(
                settings,
                "<settings><mirrors><mirror><id>build-local</id><mirrorOf>central</mirrorOf>"
                        + "<url>"
                        + m2
                        + "</url></mirror></mirrors></settings>\n");
        return settings;
    }

    private static List<String> lines(String output, String... prefixes) {
        List<String> out = new ArrayList<>();
        for (String line : output.split("\\R")) {
            for (String p : prefixes) {
                if (line.startsWith(p)) {
                    out.add(line);
                }
            }
        }
        return out;
    }

    private static String[] mvn() {
        return new String[] {Path.of(System.getProperty("maven.home"), "bin", "mvn").toString()};
    }

    private static String[] concat(String[] a, String[] b, String... c) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        all.addAll(List.of(c));
        return all.toArray(new String[0]);
    }

    private static Result java(Path dir, String classPath, String mainClass) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return run(dir, java, "-Xmx1g", "-cp", classPath, mainClass);
    }

    private static void copy(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path rel = from.relativize(p);
                if (rel.startsWith("target")) {
                    continue;
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(p, dest);
                }
            }
        }
    }

    private record Result(int status, String output) {}

    private static Result run(Path dir, String... command) throws Exception {
        Path log = Files.createTempFile(tmp, "run", ".log");
        Process p =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
