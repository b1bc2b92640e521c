package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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

    private static Set<String> ids(List<String> lines, String marker) {
        Set<String> ids = new HashSet<>();
        for (String l : lines) {
            int i = l.indexOf(marker) + marker.length();
            ids.add(l.substring(i, i + 7));
        }
        return ids;
    }

    /** A flat JSON object: numbers as Long, arrays as lists, nested objects as maps. */
    static Map<String, Object> json(Path file) throws Exception {
        try (JsonParser p = new JsonFactory().createParser(file.toFile())) {
            p.nextToken();
            return object(p);
        }
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
}
