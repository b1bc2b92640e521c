package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.table.SqlHarness.Click;
import io.bloomstream.table.internal.SqlArguments;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The counting form {@code BLOOM_COUNT_DISTINCT(..., 'retract')} (SQL accumulator layout {@value
 * BloomAccumulator#VERSION_2_COUNTING}) restores from its committed savepoints, one written on each
 * backend, on either backend, and goes on taking retractions: the query counts, per page, the users
 * whose latest click (a keep-last {@code ROW_NUMBER() ... = 1}) is on that page, so a later click
 * of a user on another page retracts the user from the page of a click counted before the
 * savepoint. After the rest of the clicks each page's result must be the one of a fresh run over
 * all of them (the counters are exact for a legal changelog: the estimate of a plain filter of the
 * users present) and within 3 standard errors of {@code COUNT(DISTINCT)}.
 *
 * <p>The plain form (SQL accumulator layout {@value BloomAccumulator#VERSION_1}, {@link
 * BloomCountDistinctSavepointITCase}) and the counting form never share state: each restore into
 * the other form fails, with the accumulator's message or Flink's, pinned here.
 */
class BloomCountDistinctRetractSavepointITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    private static final long ITEMS = 1_000;
    private static final FilterSpec SPEC = SqlArguments.spec("test", ITEMS, 0.01);
    private static final Duration DEADLINE = Duration.ofMinutes(2);

    /** The clicks in the committed savepoints. */
    private static final int GOLDEN_CLICKS = 500;

    /** The clicks read after a restore: those after the golden ones, up to this one. */
    private static final int END = 2_000;

    /** The users' latest clicks: an updating table, one transformation per kind in the plan. */
    private static final String LATEST =
            "(SELECT ts, `user`, page FROM (SELECT ts, `user`, page, ROW_NUMBER() OVER"
                    + " (PARTITION BY `user` ORDER BY ts DESC) AS rn FROM clicks) WHERE rn = 1)";

    /**
     * The query of the goldens; {@code SUM(ts)} tells when a page has its final users (its exact
     * count alone may pass through the final value on the way).
     */
    static final String QUERY =
            "SELECT page, BLOOM_COUNT_DISTINCT(`user`, "
                    + ITEMS
                    + ", 0.01, 'retract'), COUNT(DISTINCT `user`), SUM(ts) FROM "
                    + LATEST
                    + " GROUP BY page";

    /** The rows the sink received (the mini cluster runs in this JVM). */
    private static final LinkedBlockingQueue<Row> OUT = new LinkedBlockingQueue<>();

    /**
     * The committed canonical savepoint of {@link #QUERY} after the first {@value #GOLDEN_CLICKS}
     * clicks, written on {@code backend} by {@link #writeGoldenSavepoint} with {@code
     * -Dbloomstream.writeSnapshots=true}.
     */
    static Path golden(String backend) {
        return Path.of(
                "src/test/resources/savepoints/sql-count-distinct-v2-retract-"
                        + (backend.equals("hashmap") ? "heap" : backend));
    }

    /** Writes {@link #golden}: the query on the first {@value #GOLDEN_CLICKS} clicks. */
    @ParameterizedTest
    @ValueSource(strings = {"hashmap", "rocksdb"})
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeGoldenSavepoint(String backend, @TempDir Path tmp) throws Exception {
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("a.jsonl"), lines.subList(0, GOLDEN_CLICKS));
        OUT.clear();
        JobClient job = start(backend, dir, null, QUERY);
        readUntil(latest(GOLDEN_CLICKS));
        String savepoint =
                job.stopWithSavepoint(
                                false,
                                tmp.resolve("sp").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        Path golden = golden(backend);
        FileUtils.deleteDirectory(golden.toFile());
        copyDirectory(Path.of(URI.create(savepoint)), golden);
    }

    @ParameterizedTest(name = "written on {0}, restored on {1}")
    @CsvSource({"hashmap, hashmap", "hashmap, rocksdb", "rocksdb, hashmap", "rocksdb, rocksdb"})
    void restoresCommittedSavepointAndTakesRetractions(
            String writtenOn, String backend, @TempDir Path tmp) throws Exception {
        Map<String, Page> before = latest(GOLDEN_CLICKS);
        Map<String, Page> after = latest(END);
        assertThat(moved(before, after))
                .as("users counted before the savepoint who move to another page after it")
                .isGreaterThan(50);

        Path savepoint = tmp.resolve("golden");
        copyDirectory(golden(writtenOn), savepoint);
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("b.jsonl"), lines.subList(GOLDEN_CLICKS, END));
        OUT.clear();
        JobClient job = start(backend, dir, savepoint.toUri().toString(), QUERY);
        Map<String, Row> rows;
        try {
            rows = readUntil(after);
        } finally {
            job.cancel().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
        Map<String, Long> fresh = freshRun();
        assertThat(rows.keySet()).isEqualTo(fresh.keySet());
        for (Map.Entry<String, Page> e : after.entrySet()) {
            String page = e.getKey();
            Row r = rows.get(page);
            assertThat((Long) r.getField(1))
                    .as("%s against a fresh run", page)
                    .isEqualTo(fresh.get(page));
            check(page, (Long) r.getField(1), (Long) r.getField(2), e.getValue().users());
        }
    }

    /**
     * The plain golden (layout 1) restored under its own query in the counting form: Flink restores
     * the accumulator (same type), and the first row of a restored page fails naming both layouts.
     */
    @Test
    void plainGoldenUnderTheCountingFormFailsNamingBothLayouts(@TempDir Path tmp) throws Exception {
        String v1InCountingForm =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01, 'retract'),"
                        + " COUNT(DISTINCT `user`) FROM clicks GROUP BY page";
        assertThat(restorePlainGolden(v1InCountingForm, tmp))
                .contains(
                        "BLOOM_COUNT_DISTINCT(expected_items=10000, fpp=0.01) is counting (layout 2)"
                                + " but the filter is plain (layout 1)");
    }

    /**
     * The plain golden restored under the counting golden's query (keep-last, then the counting
     * form): the aggregate's accumulators differ (the updating input adds a row count), so Flink
     * refuses its state before the function sees it.
     */
    @Test
    void plainGoldenUnderTheCountingQueryIsRefusedByFlink(@TempDir Path tmp) throws Exception {
        assertThat(restorePlainGolden(QUERY, tmp))
                .contains("must not be incompatible with the old state serializer");
    }

    /** Restores the plain golden under {@code query} with the rest of the clicks: the failure. */
    private static String restorePlainGolden(String query, Path tmp) throws Exception {
        Path savepoint = tmp.resolve("golden");
        copyDirectory(BloomCountDistinctSavepointITCase.GOLDEN, savepoint);
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("b.jsonl"), lines.subList(GOLDEN_CLICKS, END));
        return failureOf(start("hashmap", dir, savepoint.toUri().toString(), query));
    }

    /**
     * The counting golden's query in the plain form does not plan: its input is updating, and the
     * plain form has no {@code retract} (so the counting state is never read as plain).
     */
    @Test
    void countingQueryInThePlainFormIsRefusedWhenPlanned(@TempDir Path tmp) {
        String plain = QUERY.replace(", 0.01, 'retract')", ", 0.01)");
        assertThat(plain).isNotEqualTo(QUERY);
        Throwable t =
                catchThrowable(() -> start("hashmap", tmp, golden("hashmap").toString(), plain));
        assertThat(t)
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("Could not find an implementation method 'retract'")
                .hasMessageContaining("CountDistinctAggFunction");
    }

    /**
     * The counting golden restored under the plain query of the plain golden (insert-only input, no
     * keep-last): Flink refuses the savepoint, whose keep-last operator has no place in the plan;
     * told to drop that state, it refuses the aggregate's, whose accumulators differ.
     */
    @ParameterizedTest(name = "allowNonRestoredState={0}")
    @CsvSource(
            delimiterString = " => ",
            value = {
                "false => Cannot map checkpoint/savepoint state for operator",
                "true => must not be incompatible with the old state serializer"
            })
    void countingGoldenUnderThePlainQueryIsRefusedByFlink(
            boolean allowNonRestored, String message, @TempDir Path tmp) throws Exception {
        Path savepoint = tmp.resolve("golden");
        copyDirectory(golden("hashmap"), savepoint);
        List<String> lines = Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
        Path dir = Files.createDirectories(tmp.resolve("clicks"));
        Files.write(dir.resolve("b.jsonl"), lines.subList(GOLDEN_CLICKS, END));
        String plain =
                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, "
                        + ITEMS
                        + ", 0.01), COUNT(DISTINCT `user`) FROM clicks GROUP BY page";
        Configuration conf = new Configuration();
        conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, allowNonRestored);
        String failure =
                failureOf(start("hashmap", dir, savepoint.toUri().toString(), plain, conf));
        assertThat(failure).contains(message);
    }

    /** Waits for the job to fail (no restarts) and returns its failure with every cause. */
    private static String failureOf(JobClient job) throws Exception {
        Throwable t =
                catchThrowable(
                        () ->
                                job.getJobExecutionResult()
                                        .get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        assertThat(t).as("the job's result").isInstanceOf(ExecutionException.class);
        return ExceptionUtils.stringifyException(t);
    }

    /** Each page's result of {@link #QUERY} over the first {@value #END} clicks, in one run. */
    private static synchronized Map<String, Long> freshRun() throws Exception {
        if (fresh == null) {
            TableEnvironment env = SqlHarness.streaming("hashmap", 2);
            List<String> lines =
                    Files.readAllLines(SqlHarness.clicksFile(), StandardCharsets.UTF_8);
            Path file = Files.createTempFile("clicks", ".jsonl");
            try {
                Files.write(file, lines.subList(0, END));
                SqlHarness.createClicks(env, file, "", false);
                Map<String, Long> out = new TreeMap<>();
                for (Row r : SqlHarness.finalRows(env.executeSql(QUERY), 1).values()) {
                    out.put((String) r.getField(0), (Long) r.getField(1));
                }
                fresh = out;
            } finally {
                Files.delete(file);
            }
        }
        return fresh;
    }

    private static Map<String, Long> fresh;

    /**
     * Checks a result against the exact count and a library filter of the same shape holding the
     * users present: equal to its estimate, and that within 3 of its standard errors of the exact
     * count (the bound of the function's guarantee).
     */
    private static void check(String page, long bloom, long exact, Set<String> users) {
        assertThat(exact).as(page).isEqualTo(users.size());
        BloomFilter library = BloomFilter.create(SPEC);
        users.forEach(library::add);
        Estimate e = library.estimate();
        assertThat(bloom).as(page).isEqualTo(Math.round(e.estimate()));
        assertThat((double) Math.abs(bloom - exact))
                .as(page)
                .isLessThanOrEqualTo(3 * e.standardError() + 0.5);
    }

    /** A page of the keep-last table: its users and the sum of their latest clicks' ts. */
    record Page(Set<String> users, long checksum) {}

    /**
     * The pages of the keep-last table over the first {@code n} clicks: each user on the page of
     * their latest click (the greatest ts; the first of equal ones, as ROW_NUMBER keeps).
     */
    static Map<String, Page> latest(int n) throws IOException {
        Map<String, Click> last = new LinkedHashMap<>();
        for (Click c : SqlHarness.clicks().subList(0, n)) {
            last.merge(c.user(), c, (old, now) -> now.ts() > old.ts() ? now : old);
        }
        Map<String, Set<String>> users = new HashMap<>();
        Map<String, Long> sums = new HashMap<>();
        for (Click c : last.values()) {
            users.computeIfAbsent(c.page(), p -> new HashSet<>()).add(c.user());
            sums.merge(c.page(), c.ts(), Long::sum);
        }
        Map<String, Page> out = new TreeMap<>();
        users.forEach((p, u) -> out.put(p, new Page(u, sums.get(p))));
        return out;
    }

    /** The users on a page in {@code before} and on another one in {@code after}. */
    private static long moved(Map<String, Page> before, Map<String, Page> after) {
        Map<String, String> pageAfter = new HashMap<>();
        after.forEach((p, page) -> page.users().forEach(u -> pageAfter.put(u, p)));
        long n = 0;
        for (Map.Entry<String, Page> e : before.entrySet()) {
            for (String u : e.getValue().users()) {
                if (!e.getKey().equals(pageAfter.get(u))) {
                    n++;
                }
            }
        }
        return n;
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
     * Starts {@code query} on a continuous file source, without restarts; operator uids come from
     * the plan (one transformation per kind in these queries), as in {@link
     * BloomCountDistinctSavepointITCase}.
     */
    private static JobClient start(String backend, Path dir, String savepoint, String query)
            throws Exception {
        return start(backend, dir, savepoint, query, new Configuration());
    }

    /** {@link #start(String, Path, String, String)} with more options in {@code conf}. */
    private static JobClient start(
            String backend, Path dir, String savepoint, String query, Configuration conf)
            throws Exception {
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set("table.exec.uid.generation", "ALWAYS");
        tEnv.getConfig().set("table.exec.uid.format", "<transformation>");
        BloomFunctions.registerAll(tEnv);
        SqlHarness.createClicks(tEnv, dir, ", 'source.monitor-interval' = '100 ms'", false);
        tEnv.toChangelogStream(tEnv.sqlQuery(query)).sinkTo(new QueueSink()).uid("queue-sink");
        return env.executeAsync("bloom-count-distinct-retract-savepoint");
    }

    /**
     * Applies the changelog until the pages are those of {@code pages}, each with its exact count
     * (field 2) and the sum of its users' ts (field 3): then each page holds its final users.
     */
    private static Map<String, Row> readUntil(Map<String, Page> pages) throws InterruptedException {
        Map<String, Row> rows = new HashMap<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!done(rows, pages)) {
            assertThat(System.nanoTime()).as("results before the deadline").isLessThan(deadline);
            Row r = OUT.poll(100, TimeUnit.MILLISECONDS);
            if (r == null) {
                continue;
            }
            if (r.getKind() == RowKind.INSERT || r.getKind() == RowKind.UPDATE_AFTER) {
                rows.put((String) r.getField(0), r);
            } else if (r.getKind() == RowKind.DELETE) {
                rows.remove((String) r.getField(0));
            }
        }
        return rows;
    }

    private static boolean done(Map<String, Row> rows, Map<String, Page> pages) {
        if (!rows.keySet().equals(pages.keySet())) {
            return false;
        }
        for (Map.Entry<String, Page> e : pages.entrySet()) {
            Row r = rows.get(e.getKey());
            if ((Long) r.getField(2) != e.getValue().users().size()
                    || (Long) r.getField(3) != e.getValue().checksum()) {
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
