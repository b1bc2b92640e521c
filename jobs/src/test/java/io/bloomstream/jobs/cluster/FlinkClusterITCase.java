package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.table.BloomFunctions;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real standalone session cluster (a JobManager and two TaskManagers as separate JVMs), started
 * once for the class: the slim job jar runs there with {@code flink run}, and with Flink's own SQL
 * client ({@code -j}, {@code CREATE FUNCTION}), and its {@code sql} command with {@code flink run}.
 */
class FlinkClusterITCase {

    @TempDir static Path tmp;

    private static StandaloneCluster cluster;

    private static List<Long> pids;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = new StandaloneCluster(tmp.resolve("cluster"));
        cluster.start(2);
        pids = cluster.pids();
        assertThat(pids).hasSize(3);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster == null) {
            return;
        }
        cluster.close();
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("process %d stopped", pid)
                    .isFalse();
        }
    }

    private static Path slimJar() {
        Path jar =
                Path.of(
                        System.getProperty(
                                "bloomstream.jobJar", "target/bloomstream-flink-job.jar"));
        assertThat(jar).as("the slim job jar (built by package)").exists();
        return jar.toAbsolutePath();
    }

    @Test
    void dedupJobRunsOnAStandaloneClusterFromTheSlimJar(@TempDir Path work) throws Exception {
        Path testdata = Cli.testdata();
        Path out = work.resolve("out");
        Path log = work.resolve("flink-run.log");
        int status =
                cluster.flinkRun(
                        log,
                        slimJar().toString(),
                        "dedup",
                        "--input",
                        testdata.resolve("dedup/ids.txt").toAbsolutePath().toString(),
                        "--output",
                        out.toString(),
                        "--expected-items",
                        "20000");
        assertThat(status).as("flink run exit status; log:\n%s", Files.readString(log)).isZero();
        assertThat(Files.readString(log)).contains("Job has been submitted with JobID");
        List<String> written = new ArrayList<>();
        try (Stream<Path> files = Files.list(out)) {
            for (Path f :
                    (Iterable<Path>)
                            files.filter(p -> p.getFileName().toString().startsWith("part-"))
                                    ::iterator) {
                written.addAll(Files.readAllLines(f));
            }
        }
        Set<String> distinct = new HashSet<>(Files.readAllLines(testdata.resolve("dedup/ids.txt")));
        assertThat(new HashSet<>(written)).hasSize(written.size());
        assertThat(distinct).containsAll(written);
        // 1% rate, binomial bound at 4.5 sigma, as in JobCommandsTest
        double bound = distinct.size() * 0.01 + 4.5 * Math.sqrt(distinct.size() * 0.01);
        assertThat((double) (distinct.size() - written.size())).isBetween(0.0, bound);
    }

    @Test
    void sqlClientRunsAScriptWithTheSlimJar(@TempDir Path work) throws Exception {
        Path testdata = Cli.testdata();
        Path users = work.resolve("users");
        Path udfJar = jarOf(work.resolve("udf.jar"), TwiceFunction.class);
        StringBuilder script = new StringBuilder();
        script.append("SET 'execution.runtime-mode' = 'batch';\n");
        script.append("SET 'table.dml-sync' = 'true';\n"); // INSERT waits for its job
        // every bloomstream function, from the slim jar given with -j
        BloomFunctions.all()
                .forEach(
                        (name, type) ->
                                script.append("CREATE TEMPORARY FUNCTION ")
                                        .append(name)
                                        .append(" AS '")
                                        .append(type.getName())
                                        .append("';\n"));
        // a function from another jar, added by the script
        script.append("ADD JAR '").append(udfJar).append("';\n");
        script.append("CREATE TEMPORARY FUNCTION twice AS '")
                .append(TwiceFunction.class.getName())
                .append("';\n");
        script.append(
                        "CREATE TABLE clicks (ts BIGINT, `user` STRING, page STRING) WITH ("
                                + " 'connector' = 'filesystem', 'format' = 'json', 'path' = '")
                .append(testdata.resolve("count/clicks.jsonl").toAbsolutePath())
                .append("');\n");
        script.append(
                        "CREATE TABLE users (page STRING, users BIGINT, twice BIGINT) WITH ("
                                + " 'connector' = 'filesystem', 'format' = 'csv', 'path' = '")
                .append(users)
                .append("');\n");
        script.append(
                "INSERT INTO users SELECT page, COUNT(DISTINCT `user`),"
                        + " twice(COUNT(DISTINCT `user`)) FROM clicks GROUP BY page;\n");
        // the Kafka table connector is in the slim jar: planning a Kafka source finds its factory
        script.append(
                "CREATE TABLE events (id STRING) WITH ('connector' = 'kafka', 'topic' = 'events',"
                        + " 'properties.bootstrap.servers' = 'localhost:9', 'format' = 'raw',"
                        + " 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n"
                        + "EXPLAIN SELECT * FROM events;\n");
        Path file = work.resolve("script.sql");
        Files.writeString(file, script);
        Path log = work.resolve("sql-client.log");
        int status =
                cluster.sqlClient(
                        log,
                        file,
                        "-j",
                        slimJar().toString(),
                        "-hist", // else it writes ~/.flink-sql-history
                        work.resolve("history").toString());
        String output = Files.readString(log);
        assertThat(status).as("SQL client exit status; output:\n%s", output).isZero();
        assertThat(output)
                .as("the SQL client's output")
                .doesNotContain("[ERROR]")
                .contains("TableSourceScan(table=[[default_catalog, default_database, events]]");
        List<String> written;
        try (Stream<Path> files = Files.walk(users)) {
            written =
                    files.filter(Files::isRegularFile)
                            .filter(f -> !f.getFileName().toString().startsWith("."))
                            .flatMap(FlinkClusterITCase::lines)
                            .collect(Collectors.toList());
        }
        List<String> truth =
                Files.readAllLines(testdata.resolve("count/clicks.truth.csv")).stream()
                        .skip(1)
                        .map(l -> l + "," + 2 * Long.parseLong(l.substring(l.indexOf(',') + 1)))
                        .collect(Collectors.toList());
        assertThat(written).containsExactlyInAnyOrderElementsOf(truth);
    }

    @Test
    void sqlCommandOfTheSlimJarRunsWithFlinkRun(@TempDir Path work) throws Exception {
        Path script = work.resolve("users.sql");
        Files.writeString(
                script,
                "CREATE TABLE clicks (ts BIGINT, `user` STRING, page STRING) WITH ("
                        + " 'connector' = 'filesystem', 'format' = 'json', 'path' = '"
                        + Cli.testdata().resolve("count/clicks.jsonl").toAbsolutePath()
                        + "');\n"
                        + "SELECT page, COUNT(DISTINCT `user`) FROM clicks GROUP BY page;\n");
        Path log = work.resolve("flink-run-sql.log");
        int status = cluster.flinkRun(log, slimJar().toString(), "sql", "-f", script.toString());
        String output = Files.readString(log);
        assertThat(status).as("flink run exit status; log:\n%s", output).isZero();
        // the result, printed by the client (the log around it is the client's own)
        List<String> truth =
                Files.readAllLines(Cli.testdata().resolve("count/clicks.truth.csv")).stream()
                        .skip(1)
                        .map(l -> l.replace(',', '\t'))
                        .collect(Collectors.toList());
        List<String> printed =
                output.lines().filter(l -> l.startsWith("/p/")).collect(Collectors.toList());
        assertThat(printed).containsExactlyElementsOf(truth);
    }

    /** A jar holding {@code type}'s class file (a top-level class). */
    private static Path jarOf(Path jar, Class<?> type) throws IOException {
        String entry = type.getName().replace('.', '/') + ".class";
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream jarOut = new JarOutputStream(out);
                var in = type.getClassLoader().getResourceAsStream(entry)) {
            jarOut.putNextEntry(new JarEntry(entry));
            in.transferTo(jarOut);
            jarOut.closeEntry();
        }
        return jar;
    }

    private static Stream<String> lines(Path file) {
        try {
            return Files.readAllLines(file).stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
