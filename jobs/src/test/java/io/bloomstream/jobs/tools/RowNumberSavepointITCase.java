package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.jobs.Await;
import io.bloomstream.jobs.io.HoldAtEnd;
import io.bloomstream.jobs.io.InputProgress;
import io.bloomstream.table.BloomFunctions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Flink SQL {@code ROW_NUMBER} keep-first dedup (plain SQL, no uid: the planner's generated uid
 * hashes) is fed every id of 300 three times, stopped with a canonical savepoint, and {@link
 * RowNumberSavepoint} reads its keys back: exactly the distinct ids fed, found without being told
 * the operator's uid hash; with {@code table.exec.state.ttl} set too, and for an event-time dedup
 * (with a TTL), a mini-batch dedup on RocksDB, and a key of two columns; a native RocksDB savepoint
 * is refused. The ids of an exact {@code BLOOM_DEDUP} are read by {@link BloomDedupSavepoint}. Each
 * job runs on its own local mini-cluster, at parallelism 2.
 */
class RowNumberSavepointITCase {

    private static final int DISTINCT = 300;

    private static final Duration WAIT = Duration.ofSeconds(120);

    /** The ids each test's job wrote (its first rows), by run id. */
    private static final ConcurrentHashMap<String, Set<String>> WRITTEN = new ConcurrentHashMap<>();

    @TempDir Path tmp;

    private static Set<String> distinctIds() {
        return LongStream.range(0, DISTINCT)
                .mapToObj(i -> "id-" + i)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static StreamExecutionEnvironment env() {
        return env(Map.of());
    }

    /** A local environment at parallelism 2 with {@code options} (job and table options). */
    private static StreamExecutionEnvironment env(Map<String, String> options) {
        Configuration conf = Configuration.fromMap(options);
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        return StreamExecutionEnvironment.getExecutionEnvironment(conf);
    }

    /**
     * Runs {@code query} (over a view {@code src(id, ts, proctime)} with each id three times, ts
     * its position, and {@code sharded(id, shard)} over it) until it wrote every distinct id, and
     * stops it with a canonical savepoint.
     */
    private String runAndSave(String runId, Map<String, String> options, String query)
            throws Exception {
        return runAndSave(runId, options, SavepointFormatType.CANONICAL, query);
    }

    private String runAndSave(
            String runId, Map<String, String> options, SavepointFormatType format, String query)
            throws Exception {
        StreamExecutionEnvironment env = env(options);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        BloomFunctions.registerAll(tEnv);
        DataStream<String> ids =
                env.fromSource(
                                new HoldAtEnd<>(
                                        new NumberSequenceSource(0, 3L * DISTINCT - 1), runId),
                                WatermarkStrategy.<Long>forMonotonousTimestamps()
                                        .withTimestampAssigner((n, ts) -> n),
                                "numbers",
                                Types.LONG)
                        // one reader: with two, the first could take both splits while the
                        // second starts, and the second, holding no split and never finishing
                        // (HoldAtEnd), would hold the event-time dedup's watermark back for good
                        // (seen once in CI: no row of the event-time dedup after 120 s)
                        .setParallelism(1)
                        .map(n -> "id-" + (n % DISTINCT))
                        .returns(Types.STRING);
        tEnv.createTemporaryView(
                "src",
                tEnv.fromDataStream(
                                ids,
                                Schema.newBuilder()
                                        .column("f0", DataTypes.STRING())
                                        .columnByMetadata(
                                                "ts", DataTypes.TIMESTAMP_LTZ(3), "rowtime")
                                        .columnByExpression("proctime", "PROCTIME()")
                                        .watermark("ts", "SOURCE_WATERMARK()")
                                        .build())
                        .as("id", "ts", "proctime"));
        tEnv.createTemporaryView(
                "sharded", tEnv.sqlQuery("SELECT id, BLOOM_SHARD(id, 4) AS shard FROM src"));
        WRITTEN.put(runId, ConcurrentHashMap.newKeySet());
        tEnv.toChangelogStream(tEnv.sqlQuery(query))
                .filter(r -> r.getKind() == RowKind.INSERT)
                .map(r -> runId + "\t" + r.getField(0))
                .returns(Types.STRING)
                .sinkTo(new Written());
        JobClient job = env.executeAsync("row-number-" + runId);
        try {
            Await.until(
                    "every distinct id written",
                    WAIT,
                    Duration.ofMillis(50),
                    () ->
                            InputProgress.of(runId).allReadersAtEnd()
                                    && WRITTEN.get(runId).size() >= DISTINCT);
            return job.stopWithSavepoint(false, tmp.toUri().toString(), format)
                    .get(2, TimeUnit.MINUTES);
        } finally {
            InputProgress.remove(runId);
        }
    }

    private static final Map<String, String> TTL_1H = Map.of("table.exec.state.ttl", "1 h");

    private static final Map<String, String> ROCKSDB = Map.of("state.backend.type", "rocksdb");

    private static final String PROCTIME_KEEP_FIRST =
            "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proctime)"
                    + " AS rn FROM src) WHERE rn = 1";

    private static final String ROWTIME_KEEP_FIRST =
            "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn"
                    + " FROM src) WHERE rn = 1";

    private static Set<String> collect(DataStream<String> ids) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it = ids.executeAndCollect("read ids")) {
            it.forEachRemaining(out::add);
        }
        assertThat(out).as("each id read once").doesNotHaveDuplicates();
        return new TreeSet<>(out);
    }

    @Test
    void readsTheKeysOfAProcessingTimeKeepFirstDedup() throws Exception {
        String savepoint = runAndSave("proctime", Map.of(), PROCTIME_KEEP_FIRST);
        assertThat(WRITTEN.get("proctime")).isEqualTo(distinctIds());

        List<RowNumberSavepoint.Candidate> found = RowNumberSavepoint.candidates(savepoint);
        assertThat(found).hasSize(1);
        assertThat(found.get(0).name()).contains("Deduplicate");
        assertThat(found.get(0).state()).isEqualTo(RowNumberSavepoint.PROCTIME_STATE);

        assertThat(collect(RowNumberSavepoint.reader(savepoint).readIds(env())))
                .isEqualTo(distinctIds());
        // the same with the uid hash given
        assertThat(
                        collect(
                                RowNumberSavepoint.reader(savepoint)
                                        .uidHash(found.get(0).uidHash())
                                        .readIds(env())))
                .isEqualTo(distinctIds());
        // a uid hash that is not the dedup's is refused, naming the dedup's
        assertThatThrownBy(
                        () ->
                                RowNumberSavepoint.reader(savepoint)
                                        .uidHash("0123456789abcdef0123456789abcdef")
                                        .readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(found.get(0).uidHash());
        // so is the uid hash of an operator that is there but is no dedup (the source)
        String source =
                org.apache.flink.state.api.runtime.SavepointLoader.loadSavepointMetadata(savepoint)
                        .getOperatorStates()
                        .stream()
                        .filter(o -> o.getOperatorName().orElse("").contains("numbers"))
                        .findFirst()
                        .orElseThrow()
                        .getOperatorID()
                        .toHexString();
        assertThatThrownBy(
                        () -> RowNumberSavepoint.reader(savepoint).uidHash(source).readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("it is no ROW_NUMBER keep-first dedup")
                .hasMessageContaining(found.get(0).uidHash());
    }

    /**
     * {@code bootstrap --from-savepoint}: the ids of a SQL keep-first dedup (with a state TTL),
     * carried into a state directory; {@code dedup} over its ids and as many new ones then passes
     * no id the SQL job had seen, and at least 97% of the new ones (fpp 0.01 at 1,000 expected ids:
     * a mean of under 1%, fixed data).
     */
    @Test
    void bootstrapFromSavepointCarriesTheIdsIntoDedup() throws Exception {
        String savepoint = runAndSave("bootstrap", TTL_1H, PROCTIME_KEEP_FIRST);
        Path state = tmp.resolve("state");
        io.bloomstream.jobs.Cli cli = new io.bloomstream.jobs.Cli();
        assertThat(
                        cli.run(
                                "bootstrap",
                                "--from-savepoint",
                                savepoint,
                                "--state-ttl",
                                "1h",
                                "--state-dir",
                                state.toString(),
                                "--expected-items",
                                "1000"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.err.toString()).contains("read " + DISTINCT + " ids");
        Path input = tmp.resolve("today.txt");
        java.nio.file.Files.write(
                input, LongStream.range(0, 2L * DISTINCT).mapToObj(i -> "id-" + i).toList());
        Path out = tmp.resolve("today");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                input.toString(),
                                "--output",
                                out.toString(),
                                "--state-dir",
                                state.toString(),
                                "--expected-items",
                                "1000"))
                .as(cli.err.toString())
                .isZero();
        List<String> passed = io.bloomstream.jobs.Cli.readParts(out);
        assertThat(passed).as("ids the SQL job had seen").noneMatch(distinctIds()::contains);
        assertThat(passed).doesNotHaveDuplicates().hasSizeGreaterThanOrEqualTo(DISTINCT * 97 / 100);

        io.bloomstream.jobs.Cli refused = new io.bloomstream.jobs.Cli();
        assertThat(
                        refused.run(
                                "bootstrap",
                                "--from-savepoint",
                                savepoint,
                                "--state-dir",
                                tmp.resolve("other").toString()))
                .isNotZero();
        assertThat(refused.err.toString()).contains("table.exec.state.ttl");
    }

    @Test
    void readsACanonicalRocksDbSavepointOfAMiniBatchDedup() throws Exception {
        Map<String, String> options = new java.util.HashMap<>(ROCKSDB);
        options.put("table.exec.mini-batch.enabled", "true");
        options.put("table.exec.mini-batch.allow-latency", "100 ms");
        options.put("table.exec.mini-batch.size", "50");
        String savepoint = runAndSave("mini-batch", options, PROCTIME_KEEP_FIRST);

        assertThat(RowNumberSavepoint.candidates(savepoint)).hasSize(1);
        assertThat(collect(RowNumberSavepoint.reader(savepoint).readIds(env())))
                .isEqualTo(distinctIds());
    }

    @Test
    void refusesANativeRocksDbSavepointNamingTheFormat() throws Exception {
        String savepoint =
                runAndSave("native", ROCKSDB, SavepointFormatType.NATIVE, PROCTIME_KEEP_FIRST);

        assertThatThrownBy(() -> RowNumberSavepoint.reader(savepoint).readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("canonical");
    }

    /**
     * A {@code BLOOM_DEDUP} keeps Bloom filters, not ids: without exact mode there are no ids to
     * read back: {@link RowNumberSavepoint} refuses its savepoint, listing its operator (with the
     * query's {@code uid}) and states, and {@link BloomDedupSavepoint} reads no ids.
     */
    @Test
    void refusesABloomDedupSavepointListingItsState() throws Exception {
        String savepoint =
                runAndSave(
                        "bloom-dedup",
                        Map.of(),
                        "SELECT id FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 1000, fpp => 0.000001,"
                                + " uid => 'firsts')");

        assertThat(RowNumberSavepoint.candidates(savepoint)).isEmpty();
        assertThatThrownBy(() -> RowNumberSavepoint.reader(savepoint).readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 0 operators")
                .hasMessageContaining("uid firsts")
                .hasMessageContaining("bloom_pages_v6");
        // its exact entries are declared but empty
        assertThat(collect(BloomDedupSavepoint.readIds(env(), savepoint, null))).isEmpty();
    }

    /**
     * A {@code BLOOM_DEDUP} in exact mode keeps each id beside its filter: {@link
     * BloomDedupSavepoint} reads them back, found by the query's uid or alone.
     */
    @Test
    void readsTheIdsOfAnExactBloomDedup() throws Exception {
        String savepoint =
                runAndSave(
                        "bloom-exact",
                        Map.of(),
                        "SELECT id FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => 1000, fpp => 0.01,"
                                + " exact => TRUE, uid => 'firsts')");

        assertThat(collect(BloomDedupSavepoint.readIds(env(), savepoint, "firsts")))
                .isEqualTo(distinctIds());
        assertThat(collect(BloomDedupSavepoint.readIds(env(), savepoint, null)))
                .isEqualTo(distinctIds());
        assertThatThrownBy(() -> BloomDedupSavepoint.readIds(env(), savepoint, "other"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "has 0 BLOOM_DEDUP operators with exact entries of uid other");
    }

    @Test
    void readsTheKeysOfADedupWithStateTtl() throws Exception {
        String savepoint = runAndSave("ttl", TTL_1H, PROCTIME_KEEP_FIRST);

        assertThat(
                        collect(
                                RowNumberSavepoint.reader(savepoint)
                                        .stateTtl(Duration.ofHours(1))
                                        .readIds(env())))
                .isEqualTo(distinctIds());
        assertThatThrownBy(() -> RowNumberSavepoint.reader(savepoint).readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table.exec.state.ttl");
    }

    @Test
    void readsTheEmittedKeysOfAnEventTimeKeepFirstDedupWithStateTtl() throws Exception {
        String savepoint = runAndSave("rowtime", TTL_1H, ROWTIME_KEEP_FIRST);
        assertThat(WRITTEN.get("rowtime")).isEqualTo(distinctIds());

        List<RowNumberSavepoint.Candidate> found = RowNumberSavepoint.candidates(savepoint);
        assertThat(found).hasSize(1);
        assertThat(found.get(0).state()).isEqualTo(RowNumberSavepoint.ROWTIME_STATE);
        assertThat(
                        collect(
                                RowNumberSavepoint.reader(savepoint)
                                        .stateTtl(Duration.ofHours(1))
                                        .readIds(env())))
                .isEqualTo(distinctIds());
    }

    @Test
    void readsAKeyOfTwoColumns() throws Exception {
        String savepoint =
                runAndSave(
                        "two-columns",
                        Map.of(),
                        "SELECT id FROM (SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k, id ORDER"
                                + " BY proctime) AS rn FROM (SELECT id, proctime,"
                                + " CAST(CHAR_LENGTH(id) AS STRING) AS k FROM src)) WHERE rn = 1");

        List<String> keys = new ArrayList<>();
        try (CloseableIterator<String[]> it =
                RowNumberSavepoint.reader(savepoint)
                        .readKeys(env())
                        .executeAndCollect("read keys")) {
            it.forEachRemaining(k -> keys.add(k[0] + "/" + k[1]));
        }
        // the key's columns come in the order of the dedup's input (id, then k), not of PARTITION
        // BY
        Set<String> expected = new TreeSet<>();
        for (String id : distinctIds()) {
            expected.add(id + "/" + id.length());
        }
        assertThat(keys).doesNotHaveDuplicates();
        assertThat(new TreeSet<>(keys)).isEqualTo(expected);
        assertThatThrownBy(() -> RowNumberSavepoint.reader(savepoint).readIds(env()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("readKeys");
    }

    /** Adds each "run\tid" to {@link #WRITTEN}. */
    private static final class Written implements Sink<String> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String line, Context ctx) {
                    int tab = line.indexOf('\t');
                    WRITTEN.get(line.substring(0, tab)).add(line.substring(tab + 1));
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
