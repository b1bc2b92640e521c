package io.bloomstream.table;

import static org.apache.flink.table.api.Expressions.$;
import static org.apache.flink.table.api.Expressions.call;
import static org.apache.flink.table.api.Expressions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.table.internal.SqlArguments;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Filters as values in streaming SQL on the committed test data: {@code BLOOM_BUILD}, {@code
 * BLOOM_MIGHT_CONTAIN} (bytes and a file), {@code BLOOM_ESTIMATE} and {@code BLOOM_UNION} against
 * the exact sets.
 *
 * <p>False-positive bounds: absent values are Bernoulli trials with at most the filter's expected
 * rate p at its fill; the bound is n p + 4.5 sqrt(n p (1 - p)) (a 4.5-sigma one-sided normal tail,
 * probability 3.4e-6), and the data and hash seed are fixed, so a failure is a bug.
 */
class BloomFiltersITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    @TempDir static Path tmp;

    private static List<String> ids;
    private static Set<String> distinct;
    private static Path probes;

    @BeforeAll
    static void data() throws Exception {
        ids = Files.readAllLines(SqlHarness.testdata().resolve("dedup/ids.txt"));
        distinct = new LinkedHashSet<>(ids);
        assertThat(distinct).hasSize(11_784); // dedup/ids.truth.json
        List<String> absent = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            absent.add("absent-" + i);
        }
        probes = Files.write(tmp.resolve("probes.txt"), absent);
    }

    private static TableEnvironment env() {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        // a streaming aggregate emits its result on every change: batch the changes
        env.getConfig().set("table.exec.mini-batch.enabled", "true");
        env.getConfig().set("table.exec.mini-batch.allow-latency", "1 s");
        env.getConfig().set("table.exec.mini-batch.size", "10000");
        table(env, "ids", SqlHarness.testdata().resolve("dedup/ids.txt"));
        table(env, "probes", probes);
        return env;
    }

    private static void table(TableEnvironment env, String name, Path file) {
        env.executeSql(
                "CREATE TEMPORARY TABLE "
                        + name
                        + " (id STRING) WITH ('connector' = 'filesystem', 'format' = 'raw',"
                        + " 'path' = '"
                        + file.toUri()
                        + "')");
    }

    private static double bound(long n, double p) {
        return n * p + 4.5 * Math.sqrt(n * p * (1 - p));
    }

    private static List<Row> rows(TableEnvironment env, String sql) throws Exception {
        List<Row> out = new ArrayList<>();
        try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    @Test
    void buildThenMightContainAndEstimate() throws Exception {
        TableEnvironment env = env();
        Map<List<Object>, Row> built =
                SqlHarness.finalRows(
                        env.executeSql("SELECT BLOOM_BUILD(id, 12000, 0.01) FROM ids"), 0);
        byte[] bytes = (byte[]) built.get(List.of()).getField(0);
        BloomFilter filter = (BloomFilter) FilterCodec.decode(bytes);
        BloomFilter library = BloomFilter.create(SqlArguments.spec("t", 12_000, 0.01));
        distinct.forEach(library::add);
        assertThat(filter.bitCount()).isEqualTo(library.bitCount());

        String hex = "X'" + HexFormat.of().formatHex(bytes) + "'";
        // every id of the list: no false negatives
        for (Row r : rows(env, "SELECT id, BLOOM_MIGHT_CONTAIN(" + hex + ", id) FROM ids")) {
            assertThat((Boolean) r.getField(1)).as((String) r.getField(0)).isTrue();
        }
        long fp = 0;
        for (Row r : rows(env, "SELECT BLOOM_MIGHT_CONTAIN(" + hex + ", id) FROM probes")) {
            fp += (Boolean) r.getField(0) ? 1 : 0;
        }
        assertThat((double) fp).isLessThanOrEqualTo(bound(20_000, filter.expectedFpp()));

        Row estimate = rows(env, "SELECT BLOOM_ESTIMATE(" + hex + ")").get(0);
        Estimate e = library.estimate();
        assertThat((Double) estimate.getField(0)).isEqualTo(e.estimate());
        assertThat(Math.abs((Double) estimate.getField(0) - distinct.size()))
                .isLessThanOrEqualTo(3 * e.standardError());

        // Table API, with every function registered
        Row count =
                SqlHarness.finalRows(
                                env.from("ids")
                                        .select(
                                                call(
                                                        "BLOOM_COUNT_DISTINCT",
                                                        $("id"),
                                                        lit(12_000),
                                                        lit(0.01)))
                                        .execute(),
                                0)
                        .get(List.of());
        assertThat((Long) count.getField(0)).isEqualTo(Math.round(e.estimate()));
    }

    @Test
    void unionOfGroupFiltersHasTheBitsOfOneFilterOfAll() throws Exception {
        TableEnvironment env = env();
        Map<List<Object>, Row> parts =
                SqlHarness.finalRows(
                        env.executeSql(
                                "SELECT RIGHT(id, 1), BLOOM_BUILD(id, 12000, 0.01) FROM ids"
                                        + " GROUP BY RIGHT(id, 1)"),
                        1);
        assertThat(parts).hasSize(10);
        List<Row> values = new ArrayList<>();
        parts.values().forEach(r -> values.add(Row.of(r.getField(1))));
        env.createTemporaryView(
                "parts",
                env.fromValues(DataTypes.ROW(DataTypes.FIELD("f", DataTypes.BYTES())), values));
        byte[] union =
                (byte[])
                        SqlHarness.finalRows(env.executeSql("SELECT BLOOM_UNION(f) FROM parts"), 0)
                                .get(List.of())
                                .getField(0);
        BloomFilter got = (BloomFilter) FilterCodec.decode(union);
        BloomFilter library = BloomFilter.create(SqlArguments.spec("t", 12_000, 0.01));
        distinct.forEach(library::add);
        assertThat(got.spec()).isEqualTo(library.spec());
        assertThat(got.bitCount()).isEqualTo(library.bitCount());
        assertThat(got.estimate()).isEqualTo(library.estimate());
        distinct.forEach(id -> assertThat(got.mightContain(id)).as(id).isTrue());
    }

    private static final Pattern ID = Pattern.compile("\"(m\\d+)\"");

    /** A filter file as {@code build-filter --normalize email} writes it, screening the mails. */
    @Test
    void fileFilterScreensMailsAsTheScreenDoes() throws Exception {
        Path spam = SqlHarness.testdata().resolve("spam");
        BloomFilter list = BloomFilter.create(100_000, 0.01);
        for (String line : Files.readAllLines(spam.resolve("blocklist.txt"))) {
            list.add(Normalization.EMAIL.apply(line));
        }
        Path file = tmp.resolve("blocklist.bloom");
        try (OutputStream out = Files.newOutputStream(file)) {
            FilterCodec.write(list, Normalization.EMAIL, out);
        }
        String truth = Files.readString(spam.resolve("mails.truth.json"), StandardCharsets.UTF_8);
        String listedPart =
                truth.substring(
                        truth.indexOf("\"listed_sender_ids\""),
                        truth.indexOf("]", truth.indexOf("\"listed_sender_ids\"")));
        Set<String> listed = new HashSet<>();
        for (Matcher m = ID.matcher(listedPart); m.find(); ) {
            listed.add(m.group(1));
        }
        assertThat(listed).isNotEmpty();

        TableEnvironment env = env();
        env.executeSql(
                "CREATE TEMPORARY TABLE mails (id STRING, `from` STRING) WITH ("
                        + " 'connector' = 'filesystem', 'format' = 'json',"
                        + " 'json.ignore-parse-errors' = 'true', 'path' = '"
                        + spam.resolve("mails.jsonl").toUri()
                        + "')");
        Set<String> flagged = new HashSet<>();
        long mails = 0;
        for (Row r :
                rows(
                        env,
                        "SELECT id, BLOOM_MIGHT_CONTAIN('"
                                + file.toUri()
                                + "', `from`) FROM mails WHERE id IS NOT NULL")) {
            mails++;
            if (Boolean.TRUE.equals(r.getField(1))) {
                flagged.add((String) r.getField(0));
            }
        }
        assertThat(flagged).containsAll(listed);
        long clean = mails - listed.size();
        assertThat((double) flagged.size() - listed.size())
                .isLessThanOrEqualTo(bound(clean, list.expectedFpp()));
    }

    @Test
    void badFilterFailsTheQueryNamingTheProblem() {
        TableEnvironment env = env();
        Throwable missing =
                catchThrowable(
                        () ->
                                rows(
                                        env,
                                        "SELECT BLOOM_MIGHT_CONTAIN('"
                                                + tmp.resolve("missing.bloom").toUri()
                                                + "', id) FROM ids"));
        assertThat(messages(missing))
                .contains("BLOOM_MIGHT_CONTAIN: cannot use filter file")
                .contains("missing.bloom: it does not exist");
        byte[] corrupt = FilterCodec.encode(BloomFilter.create(100, 0.01));
        corrupt[44] ^= 1;
        Throwable bad =
                catchThrowable(
                        () ->
                                rows(
                                        env,
                                        "SELECT BLOOM_MIGHT_CONTAIN(X'"
                                                + HexFormat.of().formatHex(corrupt)
                                                + "', id) FROM ids"));
        assertThat(messages(bad))
                .contains("BLOOM_MIGHT_CONTAIN: argument 'filter' is not a valid filter")
                .contains("crc32c: checksum mismatch");
    }

    private static String messages(Throwable t) {
        assertThat(t).isNotNull();
        StringBuilder s = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            s.append(c.getMessage()).append('\n');
        }
        return s.toString();
    }
}
