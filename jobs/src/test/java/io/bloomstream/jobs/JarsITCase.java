package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.table.BloomFunctions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two jars as built by {@code package}: {@code bloomstream.jar} runs SQL with {@code java -jar}
 * (the planner unpacked by flink-table-planner-loader, the connectors and formats found through the
 * merged {@code META-INF/services}), and {@code bloomstream-flink-job.jar} carries the SQL
 * functions but none of Flink's table jars.
 */
class JarsITCase {

    private static Path jar(String property, String fallback) {
        Path jar = Path.of(System.getProperty(property, fallback));
        assertThat(jar).as("built by package").exists();
        return jar.toAbsolutePath();
    }

    @Test
    void localJarRunsSqlWithFileFormatsAndKafka(@TempDir Path tmp) throws Exception {
        Path testdata = Cli.testdata();
        String script =
                "CREATE TABLE ids (id STRING) WITH ('connector' = 'filesystem', 'format' = 'raw',"
                        + " 'path' = '"
                        + testdata.resolve("dedup/ids.txt")
                        + "');\n"
                        + "CREATE TABLE clicks (ts BIGINT, `user` STRING, page STRING) WITH ("
                        + " 'connector' = 'filesystem', 'format' = 'json', 'path' = '"
                        + testdata.resolve("count/clicks.jsonl")
                        + "');\n"
                        + "CREATE TABLE u1 (ts BIGINT, page STRING) WITH ('connector' ="
                        + " 'filesystem', 'format' = 'csv', 'path' = '"
                        + tmp.resolve("u1")
                        + "');\n"
                        + "INSERT INTO u1 SELECT ts, page FROM clicks WHERE `user` = 'u1';\n"
                        + "SELECT COUNT(DISTINCT id) FROM ids;\n"
                        + "SELECT COUNT(*) > 0 FROM u1;\n"
                        + "CREATE TABLE events (id STRING) WITH ('connector' = 'kafka',"
                        + " 'topic' = 'events', 'properties.bootstrap.servers' = 'localhost:9',"
                        + " 'format' = 'raw', 'scan.startup.mode' = 'earliest-offset');\n"
                        + "EXPLAIN SELECT * FROM events;\n";
        Path file = tmp.resolve("script.sql");
        Files.writeString(file, script);
        Path stdout = tmp.resolve("stdout");
        Path stderr = tmp.resolve("stderr");
        Process p =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Djava.io.tmpdir=" + Files.createDirectories(tmp.resolve("t")),
                                "-jar",
                                jar("bloomstream.localJar", "target/bloomstream.jar").toString(),
                                "sql",
                                "-f",
                                file.toString())
                        .redirectOutput(stdout.toFile())
                        .redirectError(stderr.toFile())
                        .start();
        p.getOutputStream().close();
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("finished in 3 minutes").isTrue();
        assertThat(p.exitValue()).as(Files.readString(stderr)).isZero();
        List<String> out = Files.readAllLines(stdout, StandardCharsets.UTF_8);
        long distinct =
                new java.util.HashSet<>(Files.readAllLines(testdata.resolve("dedup/ids.txt")))
                        .size();
        assertThat(out.subList(0, 2)).containsExactly(Long.toString(distinct), "TRUE");
        assertThat(String.join("\n", out))
                .contains("TableSourceScan(table=[[default_catalog, default_database, events]]");
        // flink-table-planner-loader unpacks the planner to java.io.tmpdir as
        // flink-table-planner_<uuid>.jar (45 MB) and deletes it when the JVM exits normally
        try (var left = Files.list(tmp.resolve("t"))) {
            assertThat(left.map(f -> f.getFileName().toString()).collect(Collectors.toList()))
                    .noneMatch(name -> name.contains("planner"));
        }
    }

    @Test
    void slimJarCarriesTheSqlFunctionsButNoFlinkTableJars() throws Exception {
        try (JarFile slim =
                new JarFile(
                        jar("bloomstream.jobJar", "target/bloomstream-flink-job.jar").toFile())) {
            List<String> names =
                    slim.stream().map(java.util.zip.ZipEntry::getName).collect(Collectors.toList());
            assertThat(names).contains("io/bloomstream/table/BloomFunctions.class");
            for (Class<?> function : BloomFunctions.all().values()) {
                assertThat(names).contains(function.getName().replace('.', '/') + ".class");
            }
            assertThat(names)
                    .as("Flink's table API, planner, runtime and formats come with the cluster")
                    .noneMatch(n -> n.startsWith("org/apache/flink/table/"))
                    .noneMatch(n -> n.startsWith("org/apache/flink/formats/"))
                    .noneMatch(n -> n.startsWith("org/apache/flink/api/"));
        }
    }
}
