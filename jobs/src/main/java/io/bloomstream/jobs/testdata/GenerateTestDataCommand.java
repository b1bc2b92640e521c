package io.bloomstream.jobs.testdata;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code generate-testdata}: writes the data sets of {@code testdata/} and their true answers. At
 * scale 1 it reproduces the committed files byte for byte (a test checks it); larger scales make
 * benchmark inputs.
 */
@Command(
        name = "generate-testdata",
        mixinStandardHelpOptions = true,
        description = "Writes the test data sets and their true answers (deterministic).")
public final class GenerateTestDataCommand implements Callable<Integer> {

    /** Seed of the spam list; probes use other seeds. */
    public static final long BLOCKLIST_SEED = 1;

    /** Addresses in the spam list at scale 1. */
    public static final int BLOCKLIST_SIZE = 100_000;

    @Option(names = "--output", required = true, paramLabel = "DIR", description = "Directory.")
    Path output;

    @Option(
            names = "--scale",
            paramLabel = "S",
            description = "Multiplies every data set's size (default 1: the committed files).")
    int scale = 1;

    @Override
    public Integer call() throws IOException {
        if (scale < 1) {
            throw new IllegalArgumentException("--scale must be >= 1, was " + scale);
        }
        List<String> blocklist =
                TestData.addresses(BLOCKLIST_SEED, BLOCKLIST_SIZE * scale, Set.of());
        writeLines(output.resolve("spam/blocklist.txt"), blocklist);
        mails(blocklist, 2_000 * scale);
        ids(30_000 * scale);
        urls(10_000 * scale);
        clicks(20_000 * scale);
        return 0;
    }

    /** Mail events: 15% from listed senders in client spellings, some incomplete or broken. */
    private void mails(List<String> blocklist, int n) throws IOException {
        SplittableRandom r = new SplittableRandom(11);
        List<String> clean = TestData.addresses(12, 5_000, new HashSet<>(blocklist));
        List<String> lines = new ArrayList<>();
        List<String> listed = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        List<Integer> broken = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            String id = String.format(Locale.ROOT, "m%06d", i);
            int kind = r.nextInt(200);
            String to = TestData.personalAddress(r);
            if (kind == 0) {
                broken.add(i);
                lines.add("{\"id\":\"" + id + "\",\"from\":\"" + to.substring(0, 5));
                continue;
            }
            StringBuilder json = new StringBuilder("{\"id\":\"").append(id).append('"');
            if (kind <= 2) {
                missing.add(id);
            } else {
                String from;
                if (r.nextInt(100) < 15) {
                    from = TestData.variant(r, blocklist.get(TestData.skewed(r, blocklist.size())));
                    listed.add(id);
                } else {
                    from = TestData.variant(r, clean.get(r.nextInt(clean.size())));
                }
                json.append(",\"from\":\"").append(from.replace("\"", "\\\"")).append('"');
            }
            json.append(",\"to\":\"").append(to).append("\",\"subject\":\"message ").append(i);
            lines.add(json.append("\"}").toString());
        }
        writeLines(output.resolve("spam/mails.jsonl"), lines);
        Map<String, Object> truth = new LinkedHashMap<>();
        truth.put("lines", n);
        truth.put("listed_sender_ids", listed);
        truth.put("missing_from_ids", missing);
        truth.put("unparsable_line_numbers", broken);
        writeJson(output.resolve("spam/mails.truth.json"), truth);
    }

    /** Event ids with retries: most repeats come soon after the first delivery. */
    private void ids(int n) throws IOException {
        SplittableRandom r = new SplittableRandom(21);
        List<String> seen = new ArrayList<>();
        Set<String> distinct = new HashSet<>();
        List<String> lines = new ArrayList<>();
        List<String> duplicateLines = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            String id;
            int k = r.nextInt(100);
            if (seen.isEmpty() || k < 40) {
                id = String.format(Locale.ROOT, "evt-%010d", r.nextLong(10_000_000_000L));
                seen.add(id);
            } else if (k < 85) {
                id = seen.get(Math.max(0, seen.size() - 1 - r.nextInt(100)));
            } else {
                id = seen.get(r.nextInt(seen.size()));
            }
            lines.add(id);
            if (!distinct.add(id)) {
                duplicateLines.add(Integer.toString(i));
            }
        }
        writeLines(output.resolve("dedup/ids.txt"), lines);
        writeLines(output.resolve("dedup/ids.duplicate-lines.txt"), duplicateLines);
        Map<String, Object> truth = new LinkedHashMap<>();
        truth.put("lines", n);
        truth.put("distinct", distinct.size());
        truth.put("duplicates", duplicateLines.size());
        writeJson(output.resolve("dedup/ids.truth.json"), truth);
    }

    private static final String[] HOSTS = {
        "www.example-news.com", "shop.acme-store.com", "blog.tinyblog.org", "docs.devtools.io",
        "forum.gardening.net", "www.citylibrary.org", "api.weather-now.com", "media.streamhub.tv",
        "www.university.edu", "recipes.cookbook.net", "travel.wanderlust.com", "jobs.careerhub.io"
    };
    private static final String[] WORDS = {
        "news", "article", "products", "item", "category", "tag", "page", "post", "guide", "docs",
        "help", "about", "team", "search", "archive", "2024", "2025", "summer", "sale", "review"
    };

    /** A crawl stream: canonical URLs, spelled many ways, revisited, with some malformed lines. */
    private void urls(int n) throws IOException {
        SplittableRandom r = new SplittableRandom(31);
        List<String> canon = new ArrayList<>();
        Set<String> distinct = new HashSet<>();
        Map<String, Set<String>> perHost = new TreeMap<>();
        List<String> lines = new ArrayList<>();
        List<Integer> malformed = new ArrayList<>();
        String[] bad = {
            "http://", "htp//missing-colon.com/x", "http://bad host.com/page", "://no-scheme.org/",
            "mailto:someone@example.com", "http://[::1/unclosed", "just some words", "ftp:/x"
        };
        for (int i = 1; i <= n; i++) {
            if (r.nextInt(100) == 0) {
                malformed.add(i);
                lines.add(bad[r.nextInt(bad.length)]);
                continue;
            }
            String url;
            if (canon.isEmpty() || r.nextInt(100) < 45) {
                url = canonicalUrl(r);
                canon.add(url);
            } else {
                url = canon.get(canon.size() - 1 - TestData.skewed(r, canon.size()));
            }
            distinct.add(url);
            perHost.computeIfAbsent(java.net.URI.create(url).getHost(), h -> new HashSet<>())
                    .add(url);
            lines.add(spell(r, url));
        }
        writeLines(output.resolve("urls/crawl.txt"), lines);
        Map<String, Object> truth = new LinkedHashMap<>();
        truth.put("lines", n);
        truth.put("malformed_line_numbers", malformed);
        truth.put("distinct_normalized", distinct.size());
        Map<String, Integer> hosts = new TreeMap<>();
        perHost.forEach((h, s) -> hosts.put(h, s.size()));
        truth.put("distinct_per_host", hosts);
        writeJson(output.resolve("urls/crawl.truth.json"), truth);
    }

    private static String canonicalUrl(SplittableRandom r) {
        StringBuilder u = new StringBuilder(r.nextInt(4) == 0 ? "http://" : "https://");
        u.append(TestData.pick(r, HOSTS));
        int segments = 1 + r.nextInt(3);
        for (int s = 0; s < segments; s++) {
            u.append('/').append(TestData.pick(r, WORDS));
        }
        u.append('/').append(r.nextInt(500));
        if (r.nextInt(4) == 0) {
            u.append("?id=").append(r.nextInt(100));
        }
        return u.toString();
    }

    /** Spells a canonical URL another way that normalizes back to it. */
    private static String spell(SplittableRandom r, String url) {
        java.net.URI u = java.net.URI.create(url);
        String scheme = u.getScheme();
        String host = u.getHost();
        String path = u.getRawPath();
        String query = u.getRawQuery() == null ? "" : "?" + u.getRawQuery();
        String port = "";
        String fragment = "";
        int changes = r.nextInt(6);
        if (changes == 1) {
            host = host.toUpperCase(Locale.ROOT);
            scheme = scheme.toUpperCase(Locale.ROOT);
        } else if (changes == 2) {
            port = scheme.equals("https") ? ":443" : ":80";
        } else if (changes == 3) {
            fragment = "#section-" + r.nextInt(5);
        } else if (changes == 4) {
            path = "/tmp/.." + path.replace("/", "/./").replaceFirst("^/\\./", "/");
        }
        return scheme + "://" + host + port + path + query + fragment;
    }

    /** Clicks: users (skewed) on pages (skewed); the true distinct users per page. */
    private void clicks(int n) throws IOException {
        SplittableRandom r = new SplittableRandom(41);
        Map<String, Set<String>> users = new TreeMap<>();
        List<String> lines = new ArrayList<>();
        long ts = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
        for (int i = 0; i < n; i++) {
            ts += r.nextInt(200);
            String page = "/p/" + TestData.skewed(r, 20);
            String user = "u" + TestData.skewed(r, 20_000);
            users.computeIfAbsent(page, p -> new HashSet<>()).add(user);
            lines.add("{\"ts\":" + ts + ",\"user\":\"" + user + "\",\"page\":\"" + page + "\"}");
        }
        writeLines(output.resolve("count/clicks.jsonl"), lines);
        List<String> truth = new ArrayList<>();
        truth.add("page,distinct_users");
        users.forEach((p, s) -> truth.add(p + "," + s.size()));
        writeLines(output.resolve("count/clicks.truth.csv"), truth);
    }

    private static void writeLines(Path file, List<String> lines) throws IOException {
        Files.createDirectories(file.getParent());
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (String l : lines) {
                w.write(l);
                w.write('\n');
            }
        }
    }

    private static void writeJson(Path file, Map<String, Object> value) throws IOException {
        Files.createDirectories(file.getParent());
        try (var g =
                new com.fasterxml.jackson.core.JsonFactory()
                        .createGenerator(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            g.useDefaultPrettyPrinter();
            write(g, value);
            g.writeRaw('\n');
        }
    }

    private static void write(com.fasterxml.jackson.core.JsonGenerator g, Object v)
            throws IOException {
        if (v instanceof Map) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                g.writeFieldName(e.getKey().toString());
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (v instanceof List) {
            g.writeStartArray();
            for (Object o : (List<?>) v) {
                write(g, o);
            }
            g.writeEndArray();
        } else if (v instanceof Number) {
            g.writeNumber(((Number) v).longValue());
        } else {
            g.writeString(v.toString());
        }
    }
}
