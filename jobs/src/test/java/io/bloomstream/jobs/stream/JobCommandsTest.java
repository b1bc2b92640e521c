package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream commands, run in-process on the embedded mini-cluster against the committed test data
 * and checked against its recorded true answers.
 */
class JobCommandsTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @Test
    void dedupWritesEachIdOnce() throws Exception {
        Path data = Cli.testdata().resolve("dedup");
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                data.resolve("ids.txt").toString(),
                                "--output",
                                out.toString(),
                                "--expected-items",
                                "20000",
                                "--fpp",
                                "0.01"))
                .as(cli.err.toString())
                .isZero();
        List<String> written = Cli.readParts(out);
        Set<String> distinct = new HashSet<>(Files.readAllLines(data.resolve("ids.txt")));
        assertThat(new HashSet<>(written)).as("no id twice").hasSize(written.size());
        assertThat(distinct).containsAll(written);
        long truth = (Long) json(data.resolve("ids.truth.json")).get("distinct");
        assertThat((long) distinct.size()).isEqualTo(truth);
        // Each first occurrence is dropped with at most p = 1%: binomial bound, 4.5 sigma.
        double bound = truth * 0.01 + 4.5 * Math.sqrt(truth * 0.01 * 0.99);
        assertThat((double) (truth - written.size())).isBetween(0.0, bound);
    }

    /**
     * Exact mode behind a deliberately bad filter (100 ids expected of 20,000, p = 30%: the filter
     * alone drops most first occurrences) writes every distinct id exactly once.
     */
    @Test
    void dedupExactWritesEveryDistinctIdOnceBehindABadFilter() throws Exception {
        Path data = Cli.testdata().resolve("dedup");
        Path out = tmp.resolve("exact");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                data.resolve("ids.txt").toString(),
                                "--output",
                                out.toString(),
                                "--expected-items",
                                "100",
                                "--fpp",
                                "0.3",
                                "--exact"))
                .as(cli.err.toString())
                .isZero();
        List<String> written = Cli.readParts(out);
        Set<String> distinct = new HashSet<>(Files.readAllLines(data.resolve("ids.txt")));
        assertThat(written).hasSize(distinct.size());
        assertThat(new HashSet<>(written)).isEqualTo(distinct);
    }

    @Test
    void dedupWithATimeFieldRemembersIdsForTheRetentionInEventTime() throws Exception {
        // Each id j occurs at b, b + 5 s (a duplicate under 10 s retention) and b + 25 s (past
        // retention + one generation: passes again), lines shuffled within 3 s of disorder; the
        // watermark trails by an hour, so nothing is late and every decision is determined.
        java.util.Random random = new java.util.Random(11);
        List<long[]> events = new ArrayList<>();
        for (int j = 0; j < 200; j++) {
            long b = 1_700_000_000_000L + j * 100L;
            for (long dt : new long[] {0, 5_000, 25_000}) {
                events.add(new long[] {j, b + dt, b + dt + random.nextInt(3_000)});
            }
        }
        events.sort(java.util.Comparator.comparingLong(e -> e[2]));
        List<String> lines = new ArrayList<>();
        for (long[] e : events) {
            lines.add(
                    e[1] % 2 == 0
                            ? "{\"id\":\"id" + e[0] + "\",\"ts\":" + e[1] + "}"
                            : "{\"id\":\"id"
                                    + e[0]
                                    + "\",\"ts\":\""
                                    + java.time.Instant.ofEpochMilli(e[1])
                                    + "\"}");
        }
        lines.add("{\"id\":\"no-time\"}");
        lines.add("{\"id\":\"bad-time\",\"ts\":\"yesterday\"}");
        Path in = tmp.resolve("events.json");
        Files.write(in, lines);
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                in.toString(),
                                "--output",
                                out.toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "id",
                                "--time-field",
                                "ts",
                                "--retention",
                                "10s",
                                "--max-out-of-orderness",
                                "1h",
                                "--expected-items",
                                "1000",
                                "--fpp",
                                "0.001"))
                .as(cli.err.toString())
                .isZero();
        List<String> written = Cli.readParts(out);
        Map<String, Integer> perId = new TreeMap<>();
        for (String line : written) {
            perId.merge((String) json(line).get("id"), 1, Integer::sum);
        }
        assertThat(perId.values()).as("at most two passes per id").allMatch(n -> n <= 2);
        // 400 expected passes at p = 0.001 over at most 5 generations consulted: mean 2, so 10
        // false drops is past 5 sigma.
        assertThat(written.size()).isBetween(390, 400);
        List<String> rejected = Cli.readParts(out.resolve("_rejected"));
        assertThat(rejected).hasSize(2);
        assertThat(String.join("\n", rejected))
                .contains("missing field 'ts'")
                .contains("bad time field 'ts': yesterday");
    }

    @Test
    void dedupRejectsEachInvalidUtf8LineInsteadOfCollapsingThem() throws Exception {
        // Two different lines that decode to the same "x\uFFFDy" under replacement decoding.
        Path in = tmp.resolve("mixed.txt");
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        bytes.writeBytes("alpha\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.writeBytes(new byte[] {'x', (byte) 0xFF, 'y', '\n'});
        bytes.writeBytes("gr\u00fc\u00dfe\r\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.writeBytes(new byte[] {'x', (byte) 0xFE, 'y', '\n'});
        bytes.writeBytes("alpha\nbeta".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Files.write(in, bytes.toByteArray());
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                in.toString(),
                                "--output",
                                out.toString(),
                                "--expected-items",
                                "1000",
                                "--parallelism",
                                "1"))
                .as(cli.err.toString())
                .isZero();
        assertThat(Cli.readParts(out)).containsExactly("alpha", "gr\u00fc\u00dfe", "beta");
        assertThat(jsonLines(out.resolve("_rejected")))
                .containsExactlyInAnyOrder(
                        Map.of("reason", "not valid UTF-8 at byte 1", "record_base64", "eP95"),
                        Map.of("reason", "not valid UTF-8 at byte 1", "record_base64", "eP55"));
        assertThat(cli.err.toString())
                .contains("read 6 records; wrote 3 first occurrences")
                .contains("rejected 2");
    }

    @Test
    void dedupRejectsALineLongerThanTheCapAndPassesTheRest() throws Exception {
        Path in = tmp.resolve("long.txt");
        Files.writeString(in, "alpha\n" + "z".repeat(5000) + "\nbeta\nalpha\n");
        Path out = tmp.resolve("out");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                in.toString(),
                                "--output",
                                out.toString(),
                                "--max-line-bytes",
                                "4k",
                                "--parallelism",
                                "1"))
                .as(cli.err.toString())
                .isZero();
        assertThat(Cli.readParts(out)).containsExactly("alpha", "beta");
        assertThat(jsonLines(out.resolve("_rejected")))
                .containsExactly(
                        Map.of(
                                "reason",
                                "line of 5000 bytes, longer than --max-line-bytes 4000",
                                "record_prefix_base64",
                                java.util.Base64.getEncoder()
                                        .encodeToString("z".repeat(1024).getBytes())));
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--max-line-bytes", "0"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--max-line-bytes must be between 1 and");
    }

    @Test
    void screenFlagsListedSendersAndRejectsBrokenRecords() throws Exception {
        Path spam = Cli.testdata().resolve("spam");
        Path filter = tmp.resolve("spam.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                spam.resolve("blocklist.txt").toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.001",
                                "--normalize",
                                "email"))
                .isZero();
        assertThat(
                        cli.run(
                                "screen",
                                "--filter",
                                filter.toString(),
                                "--input",
                                spam.resolve("mails.jsonl").toString(),
                                "--format",
                                "json",
                                "--field",
                                "from",
                                "--output",
                                tmp.resolve("clean").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()))
                .as(cli.err.toString())
                .isZero();
        Map<String, Object> truth = json(spam.resolve("mails.truth.json"));
        Set<String> flagged = ids(Cli.readParts(tmp.resolve("flagged")), "\\\"id\\\":\\\"");
        Set<String> clean = ids(Cli.readParts(tmp.resolve("clean")), "\"id\":\"");
        List<String> rejected = Cli.readParts(tmp.resolve("clean/_rejected"));
        @SuppressWarnings("unchecked")
        List<String> listed = (List<String>) truth.get("listed_sender_ids");
        @SuppressWarnings("unchecked")
        List<String> missing = (List<String>) truth.get("missing_from_ids");
        @SuppressWarnings("unchecked")
        List<Long> broken = (List<Long>) truth.get("unparsable_line_numbers");
        assertThat(flagged).as("no false negative").containsAll(listed);
        assertThat(rejected).hasSize(missing.size() + broken.size());
        assertThat(rejected.stream().filter(r -> r.contains("screened field missing")))
                .hasSize(missing.size());
        assertThat(rejected.stream().filter(r -> r.contains("not JSON"))).hasSize(broken.size());
        long lines = (Long) truth.get("lines");
        assertThat(flagged.size() + clean.size() + rejected.size()).isEqualTo((int) lines);
        // Unlisted senders flagged: Binomial(n, 0.001) at 4.5 sigma.
        double n = lines - listed.size() - missing.size() - broken.size();
        double bound = n * 0.001 + 4.5 * Math.sqrt(n * 0.001);
        assertThat((double) (flagged.size() - listed.size())).isLessThanOrEqualTo(bound);
    }

    @Test
    @SuppressWarnings("unchecked")
    void frontierWritesEachNormalizedUrlOnceInArrivalOrderPerHost() throws Exception {
        Path urls = Cli.testdata().resolve("urls");
        Path out = tmp.resolve("frontier");
        assertThat(
                        cli.run(
                                "frontier",
                                "--input",
                                urls.resolve("crawl.txt").toString(),
                                "--output",
                                out.toString(),
                                "--expected-items",
                                "1000"))
                .as(cli.err.toString())
                .isZero();
        Map<String, Object> truth = json(urls.resolve("crawl.truth.json"));
        List<String> written = Cli.readParts(out);
        assertThat(new HashSet<>(written)).hasSize(written.size());
        long distinct = (Long) truth.get("distinct_normalized");
        double bound = distinct * 0.01 + 4.5 * Math.sqrt(distinct * 0.01);
        assertThat((double) (distinct - written.size())).isBetween(0.0, bound);
        assertThat(Cli.readParts(out.resolve("_rejected")))
                .hasSize(((List<Object>) truth.get("malformed_line_numbers")).size());
        // Per host, the order of first arrival: a URL's first line precedes the next URL's.
        List<String> input = Files.readAllLines(urls.resolve("crawl.txt"));
        Map<String, Integer> firstLine = new java.util.HashMap<>();
        for (int i = 0; i < input.size(); i++) {
            try {
                firstLine.putIfAbsent(UrlNormalizer.normalize(input.get(i)), i);
            } catch (UrlNormalizer.MalformedUrl e) {
                // rejected
            }
        }
        Map<String, Integer> lastPerHost = new java.util.HashMap<>();
        for (String part : partFiles(out)) {
            lastPerHost.clear();
            for (String url : Files.readAllLines(Path.of(part))) {
                int line = firstLine.get(url);
                Integer previous = lastPerHost.put(UrlNormalizer.host(url), line);
                assertThat(previous == null || previous < line).as(url).isTrue();
            }
        }
    }

    @Test
    void frontierExactWritesEveryNormalizedUrlOnceBehindABadFilter() throws Exception {
        Path urls = Cli.testdata().resolve("urls");
        Path out = tmp.resolve("frontier-exact");
        assertThat(
                        cli.run(
                                "frontier",
                                "--input",
                                urls.resolve("crawl.txt").toString(),
                                "--output",
                                out.toString(),
                                "--expected-items",
                                "10",
                                "--fpp",
                                "0.3",
                                "--exact"))
                .as(cli.err.toString())
                .isZero();
        Set<String> truth = new HashSet<>();
        for (String line : Files.readAllLines(urls.resolve("crawl.txt"))) {
            try {
                truth.add(UrlNormalizer.normalize(line));
            } catch (UrlNormalizer.MalformedUrl e) {
                // rejected
            }
        }
        List<String> written = Cli.readParts(out);
        assertThat(written).hasSize(truth.size());
        assertThat(new HashSet<>(written)).isEqualTo(truth);
    }

    private static List<String> partFiles(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith("part-"))
                    .map(Path::toString)
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    @Test
    void countWritesAFinalEstimatePerKeyNearTheTruth() throws Exception {
        Path data = Cli.testdata().resolve("count");
        Path out = tmp.resolve("count");
        assertThat(
                        cli.run(
                                "count",
                                "--input",
                                data.resolve("clicks.jsonl").toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "user",
                                "--key-field",
                                "page",
                                "--expected-items",
                                "5000",
                                "--output",
                                out.toString()))
                .as(cli.err.toString())
                .isZero();
        Map<String, Long> truth = new java.util.HashMap<>();
        for (String line : Files.readAllLines(data.resolve("clicks.truth.csv")).subList(1, 21)) {
            String[] kv = line.split(",");
            truth.put(kv[0], Long.parseLong(kv[1]));
        }
        Map<String, Map<String, Object>> finals = new java.util.HashMap<>();
        for (Map<String, Object> record : jsonLines(out)) {
            if (Boolean.parseBoolean(record.get("final").toString())) {
                assertThat(finals.put((String) record.get("key"), record)).isNull();
            }
        }
        assertThat(finals.keySet()).isEqualTo(truth.keySet());
        for (Map.Entry<String, Long> t : truth.entrySet()) {
            Map<String, Object> r = finals.get(t.getKey());
            // 20 keys: 4 standard errors keep the family-wise false alarm near 0.1%.
            double estimate = Double.parseDouble(r.get("estimate").toString());
            double se = Double.parseDouble(r.get("standard_error").toString());
            assertThat(Math.abs(estimate - t.getValue()))
                    .as("%s: %s", t.getKey(), r)
                    .isLessThanOrEqualTo(4 * se + 0.5);
        }
    }

    @Test
    void countOfAFewLinesOverManyShardsWritesOneValidFinalRecord() throws Exception {
        // Issue 11: 4 distinct lines, 1000 expected items over 1024 shards (stages of 15 bits)
        // used to write four "final" records, each "saturated" with a null estimate.
        Path in = tmp.resolve("four.txt");
        Files.write(in, List.of("a", "b", "c", "d", "a"));
        Path out = tmp.resolve("four");
        assertThat(
                        cli.run(
                                "count",
                                "--input",
                                in.toString(),
                                "--expected-items",
                                "1000",
                                "--output",
                                out.toString()))
                .as(cli.err.toString())
                .isZero();
        List<Map<String, Object>> records = jsonLines(out);
        List<Map<String, Object>> finals = new ArrayList<>();
        for (Map<String, Object> r : records) {
            if (Boolean.parseBoolean(r.get("final").toString())) {
                finals.add(r);
            }
        }
        assertThat(finals).as("%s", records).hasSize(1);
        Map<String, Object> f = finals.get(0);
        assertThat(f).containsEntry("key", "*");
        assertThat(f.get("valid").toString()).isEqualTo("true");
        assertThat(f.get("saturated").toString()).isEqualTo("false");
        // Three standard errors of the sum of four one-item shards (about 0.2 each).
        assertThat(4.0)
                .isBetween(
                        Double.parseDouble(f.get("lower").toString()),
                        Double.parseDouble(f.get("upper").toString()));
    }

    @Test
    void countPerWindowWritesFinalWindowRecordsThatCoverEachKey() throws Exception {
        Path data = Cli.testdata().resolve("count");
        Path out = tmp.resolve("windows");
        assertThat(
                        cli.run(
                                "count",
                                "--input",
                                data.resolve("clicks.jsonl").toString(),
                                "--format",
                                "json",
                                "--id-field",
                                "user",
                                "--key-field",
                                "page",
                                "--expected-items",
                                "2000",
                                "--window",
                                "100ms",
                                "--output",
                                out.toString()))
                .as(cli.err.toString())
                .isZero();
        Map<String, Double> sum = new java.util.HashMap<>();
        Map<String, Double> variance = new java.util.HashMap<>();
        for (Map<String, Object> r : jsonLines(out)) {
            assertThat(r).containsKey("window_start").containsEntry("final", "true");
            String key = (String) r.get("key");
            double se = Double.parseDouble(r.get("standard_error").toString());
            sum.merge(key, Double.parseDouble(r.get("estimate").toString()), Double::sum);
            variance.merge(key, se * se, Double::sum);
        }
        // Windows split a key's clicks, so its windows' distinct counts add up to at least the
        // key's distinct count (users seen in two windows count twice).
        for (String line : Files.readAllLines(data.resolve("clicks.truth.csv")).subList(1, 21)) {
            String[] kv = line.split(",");
            assertThat(sum.get(kv[0]) + 4 * Math.sqrt(variance.get(kv[0])) + 0.5)
                    .as(kv[0])
                    .isGreaterThanOrEqualTo(Long.parseLong(kv[1]));
        }
    }

    @Test
    void everyCommandHasHelpAndRejectsBadFlagsWithStatusTwo() {
        for (String c :
                List.of(
                        "plan",
                        "build-filter",
                        "query",
                        "inspect",
                        "dedup",
                        "frontier",
                        "screen",
                        "count")) {
            assertThat(new Cli().run(c, "--help")).as(c).isZero();
            Cli bad = new Cli();
            assertThat(bad.run(c, "--no-such-flag")).as(c).isEqualTo(2);
            assertThat(bad.err.toString())
                    .as(c)
                    .contains("See 'bloomstream " + c + " --help' for every flag.")
                    .doesNotContain("Usage:");
        }
        Cli cli = new Cli();
        assertThat(cli.run("dedup", "--output", "x")).isEqualTo(2);
        assertThat(cli.err.toString()).contains("--input is required");
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--format", "json"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--format json needs --id-field");
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--retention", "soon"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("'soon' is not a duration");
        assertThat(cli.run("dedup", "--input", "x", "--output", "y", "--time-field", "ts"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--time-field needs --retention");
        assertThat(
                        cli.run(
                                "dedup",
                                "--input",
                                "x",
                                "--output",
                                "y",
                                "--retention",
                                "1h",
                                "--time-field",
                                "ts"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--time-field needs --format json");
        assertThat(cli.run("count", "--input", "x", "--output", "y", "--expected-items", "0"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--expected-items must be >= 1, was 0");
    }

    private static Set<String> ids(List<String> lines, String marker) {
        Set<String> ids = new HashSet<>();
        for (String l : lines) {
            int i = l.indexOf(marker);
            assertThat(i).as("id in %s", l).isNotNegative();
            ids.add(l.substring(i + marker.length(), i + marker.length() + 7));
        }
        return ids;
    }

    /** A JSON file's object: numbers as Long, arrays as lists, nested objects as maps. */
    static Map<String, Object> json(Path file) throws Exception {
        return json(Files.readString(file));
    }

    /** See {@link #json(Path)}. */
    static Map<String, Object> json(String text) throws Exception {
        try (JsonParser p = new JsonFactory().createParser(text)) {
            p.nextToken();
            return object(p);
        }
    }

    /** The JSON lines of a job's part files. */
    static List<Map<String, Object>> jsonLines(Path dir) throws Exception {
        List<Map<String, Object>> records = new ArrayList<>();
        for (String line : Cli.readParts(dir)) {
            records.add(json(line));
        }
        return records;
    }

    private static Map<String, Object> object(JsonParser p) throws Exception {
        Map<String, Object> m = new TreeMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            m.put(name, value(p));
        }
        return m;
    }

    private static Object value(JsonParser p) throws Exception {
        switch (p.currentToken()) {
            case START_OBJECT:
                return object(p);
            case START_ARRAY:
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(value(p));
                }
                return list;
            case VALUE_NUMBER_INT:
                return p.getLongValue();
            default:
                return p.getText();
        }
    }

    @Test
    void aPipeAsInputIsAUsageErrorThatSaysWhatToDo() throws Exception {
        // Flink's file source seeks in its files: a pipe failed the job with "Illegal seek"
        Path fifo = tmp.resolve("ids.fifo");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        for (String command : List.of("dedup", "frontier", "count")) {
            Cli c = new Cli();
            assertThat(
                            c.run(
                                    command,
                                    "--input",
                                    fifo.toString(),
                                    "--output",
                                    tmp.resolve("out-" + command).toString()))
                    .as(command)
                    .isEqualTo(2);
            assertThat(c.err.toString())
                    .as(command)
                    .contains("--input " + fifo + " is not a file or directory (a pipe?)")
                    .contains("write the stream to a file first");
        }
    }

    @Test
    void aMissingInputIsAUsageErrorThatNamesThePath() throws Exception {
        // the job failed on it, after the cluster had started, with Flink's FileNotFoundException
        Path missing = tmp.resolve("no-such-dir/ids.txt");
        Path filter = Files.writeString(tmp.resolve("list.txt"), "a\n");
        for (String command : List.of("dedup", "frontier", "count", "screen")) {
            List<String> args =
                    new ArrayList<>(
                            List.of(
                                    command,
                                    "--input",
                                    missing.toString(),
                                    "--output",
                                    tmp.resolve("out-" + command).toString()));
            if (command.equals("screen")) {
                args.addAll(
                        List.of(
                                "--filter",
                                filter.toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()));
            }
            Cli c = new Cli();
            assertThat(c.run(args.toArray(String[]::new))).as(command).isEqualTo(2);
            assertThat(c.err.toString())
                    .as(command)
                    .startsWith(
                            "error: --input " + missing + ": no such file (nor its directory)\n")
                    .doesNotContain("Flink's log");
            assertThat(tmp.resolve("out-" + command)).doesNotExist();
        }
    }

    @Test
    void aMissingFilterOrUpdatesFileOfScreenIsAUsageErrorThatNamesThePath() throws Exception {
        Path input = Files.writeString(tmp.resolve("in.txt"), "a\nb\n");
        Path missing = tmp.resolve("spam.bloom");
        Cli c = new Cli();
        assertThat(
                        c.run(
                                "screen",
                                "--input",
                                input.toString(),
                                "--filter",
                                missing.toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()))
                .as(c.err.toString())
                .isEqualTo(2);
        assertThat(c.err.toString())
                .startsWith("error: --filter " + missing + ": no such file\n")
                .doesNotContain("Flink's log");
        assertThat(tmp.resolve("out")).doesNotExist();
        // and the same for its --updates file
        Path filter = Files.writeString(tmp.resolve("list.txt"), "a\n");
        Cli updates = new Cli();
        assertThat(
                        updates.run(
                                "screen",
                                "--input",
                                input.toString(),
                                "--filter",
                                filter.toString(),
                                "--updates",
                                tmp.resolve("updates.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()))
                .as(updates.err.toString())
                .isEqualTo(2);
        assertThat(updates.err.toString())
                .startsWith("error: --updates " + tmp.resolve("updates.txt") + ": no such file\n");
    }

    @Test
    void passThroughIsRefusedWhereItWouldDropState() {
        // a pass-through run that resumed a state directory would drop the dedup filters
        Cli c = new Cli();
        assertThat(
                        c.run(
                                "dedup",
                                "--pass-through",
                                "--input",
                                tmp.resolve("in.txt").toString(),
                                "--output",
                                tmp.resolve("out").toString(),
                                "--state-dir",
                                tmp.resolve("state").toString()))
                .isEqualTo(2);
        assertThat(c.err.toString()).contains("--pass-through (for benchmarks) takes files alone");
    }
}
