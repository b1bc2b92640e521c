package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code BLOOM_COUNT_DISTINCT} survives a stop-with-savepoint and resume: a continuous file source
 * reads the first 12,000 clicks, the job stops with a savepoint once every page's exact count has
 * them, and the resumed job reads the other 8,000 clicks and a replay of 3,000 clicks of the first
 * part. Each page's result must then equal the estimate of a filter of every user of the page (the
 * bits of the first run restored; the replay adds no bit) and the exact COUNT(DISTINCT) must equal
 * the committed truth.
 */
class BloomCountDistinctSavepointITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    private static final int FIRST = 12_000;
    private static final int REPLAY = 3_000;
    private static final Duration DEADLINE = Duration.ofMinutes(2);

    private static final String QUERY =
            "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01), COUNT(DISTINCT `user`)"
                    + " FROM clicks GROUP BY page";

    /** The rows the sink received (the mini cluster runs in this JVM). */
    private static final LinkedBlockingQueue<Row> OUT = new LinkedBlockingQueue<>();

    @ParameterizedTest
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void resumesFromSavepoint(String backend, @TempDir Path tmp) throws Exception {
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        List<SqlHarness.Click> clicks = SqlHarness.clicks();
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("a.jsonl"), lines.subList(0, FIRST));

        // Run 1: the first part, until each page's exact count has it; then a savepoint.
        Map<String, Set<String>> first = SqlHarness.usersPerPage(clicks.subList(0, FIRST));
        OUT.clear();
        JobClient job1 = start(backend, dir, null);
        Map<String, Row> rows = readUntil(first);
        for (Map.Entry<String, Set<String>> e : first.entrySet()) {
            Row r = rows.get(e.getKey());
            BloomCountDistinctITCase.check(
                    "run 1 " + e.getKey(),
                    (Long) r.getField(1),
                    (Long) r.getField(2),
                    e.getValue());
        }
        String savepoint =
                job1.stopWithSavepoint(
                                false,
                                tmp.resolve("sp").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);

        // Run 2 from the savepoint: the rest, and a replay of part of the first part.
        Files.write(dir.resolve("b.jsonl"), lines.subList(FIRST, lines.size()));
        Files.write(dir.resolve("c.jsonl"), lines.subList(0, REPLAY));
        Map<String, Set<String>> all = SqlHarness.usersPerPage(clicks);
        Map<String, Long> truth = SqlHarness.truth();
        OUT.clear();
        JobClient job2 = start(backend, dir, savepoint);
        try {
            // Restored pages emit only on new rows: read until every page's exact count is the
            // full truth.
            rows = readUntil(all);
            for (Map.Entry<String, Set<String>> e : all.entrySet()) {
                Row r = rows.get(e.getKey());
                assertThat((Long) r.getField(2)).isEqualTo(truth.get(e.getKey()));
                BloomCountDistinctITCase.check(
                        "run 2 " + e.getKey(),
                        (Long) r.getField(1),
                        (Long) r.getField(2),
                        e.getValue());
            }
        } finally {
            job2.cancel().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /**
     * The committed canonical savepoint of the query (accumulator layout {@value
     * BloomAccumulator#LAYOUT_VERSION}) after the first {@value #GOLDEN_CLICKS} clicks, written by
     * {@link #writeGoldenSavepoint} with {@code -Dbloomstream.writeSnapshots=true}. A canonical
     * savepoint restores on either backend.
     */
    static final Path GOLDEN = Path.of("src/test/resources/savepoints/sql-count-distinct-v1");

    private static final int GOLDEN_CLICKS = 500;

    @ParameterizedTest
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void restoresCommittedSavepoint(String backend, @TempDir Path tmp) throws Exception {
        Path savepoint = tmp.resolve("golden");
        copyDirectory(GOLDEN, savepoint);
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        List<SqlHarness.Click> clicks = SqlHarness.clicks().subList(0, 2 * GOLDEN_CLICKS);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("b.jsonl"), lines.subList(GOLDEN_CLICKS, 2 * GOLDEN_CLICKS));
        Map<String, Set<String>> all = SqlHarness.usersPerPage(clicks);
        OUT.clear();
        JobClient job = start(backend, dir, savepoint.toUri().toString());
        try {
            Map<String, Row> rows = readUntil(all);
            for (Map.Entry<String, Set<String>> e : all.entrySet()) {
                Row r = rows.get(e.getKey());
                BloomCountDistinctITCase.check(
                        "golden " + e.getKey(),
                        (Long) r.getField(1),
                        (Long) r.getField(2),
                        e.getValue());
            }
        } finally {
            job.cancel().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** Writes {@link #GOLDEN}: the query on the first {@value #GOLDEN_CLICKS} clicks. */
    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeGoldenSavepoint(@TempDir Path tmp) throws Exception {
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("a.jsonl"), lines.subList(0, GOLDEN_CLICKS));
        OUT.clear();
        JobClient job = start("hashmap", dir, null);
        readUntil(SqlHarness.usersPerPage(SqlHarness.clicks().subList(0, GOLDEN_CLICKS)));
        String savepoint =
                job.stopWithSavepoint(
                                false,
                                tmp.resolve("sp").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        FileUtils.deleteDirectory(GOLDEN.toFile());
        copyDirectory(Path.of(URI.create(savepoint)), GOLDEN);
    }

    private static void copyDirectory(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, to.resolve(f.getFileName().toString()));
            }
        }
    }

    /**
     * Starts the query on a continuous file source; operator uids come from the plan (the default
     * leaves them to Flink's hashes, which differ between two runs of one query in one JVM), and
     * one uid per transformation kind is unique in this query.
     */
    private static JobClient start(String backend, Path dir, String savepoint) throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set("table.exec.uid.generation", "ALWAYS");
        tEnv.getConfig().set("table.exec.uid.format", "<transformation>");
        BloomFunctions.registerAll(tEnv);
        SqlHarness.createClicks(tEnv, dir, ", 'source.monitor-interval' = '100 ms'", false);
        tEnv.toChangelogStream(tEnv.sqlQuery(QUERY)).sinkTo(new QueueSink()).uid("queue-sink");
        return env.executeAsync("bloom-count-distinct-savepoint");
    }

    /**
     * Applies the changelog until each page's exact count (field 2) equals the size of its user
     * set: then every new user of the page was counted, and the rows still to come can only be
     * repeats, which change neither count.
     */
    private static Map<String, Row> readUntil(Map<String, Set<String>> users)
            throws InterruptedException {
        Map<String, Row> rows = new HashMap<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!done(rows, users)) {
            assertThat(System.nanoTime()).as("results before the deadline").isLessThan(deadline);
            Row r = OUT.poll(100, TimeUnit.MILLISECONDS);
            if (r != null
                    && (r.getKind() == RowKind.INSERT || r.getKind() == RowKind.UPDATE_AFTER)) {
                rows.put((String) r.getField(0), r);
            }
        }
        return rows;
    }

    private static boolean done(Map<String, Row> rows, Map<String, Set<String>> users) {
        for (Map.Entry<String, Set<String>> e : users.entrySet()) {
            Row r = rows.get(e.getKey());
            if (r == null || (Long) r.getField(2) != e.getValue().size()) {
                return false;
            }
        }
        return true;
    }

    /** Collects into {@link #OUT}. */
    private static final class QueueSink implements Sink<Row> {
        @Override
        public SinkWriter<Row> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Row element, Context context) {
                    OUT.add(element);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
