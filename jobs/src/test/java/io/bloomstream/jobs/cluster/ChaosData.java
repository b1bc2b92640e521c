package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The chaos test's input (seeded, so every run sends the same records in the same order) and the
 * checks of what the jobs committed. Bad records are all different, so "every bad record in the
 * dead-letter topic exactly once" is "as many distinct dead letters as bad records, and no more".
 */
final class ChaosData {

    /**
     * The dedup jobs' rate: small, so that the bound on missing first occurrences is a handful and
     * a lost transaction (hundreds of first occurrences a second) cannot hide inside it.
     */
    static final double DEDUP_FPP = 1e-5;

    static final int BAD_PER_KIND = 10;
    static final Pattern EVENT_ID = Pattern.compile("\"id\":\"(e\\d+)\"");
    static final Pattern MAIL_ID = Pattern.compile("mail-\\d{7}");

    final int distinct;
    final int mailCount;
    final List<byte[]> events;
    final List<byte[]> mails;

    ChaosData(int distinct, int mailCount, long seed) {
        this.distinct = distinct;
        this.mailCount = mailCount;
        Random random = new Random(seed);
        List<byte[]> e = new ArrayList<>();
        for (int i = 0; i < 3 * distinct; i++) {
            int id = i % distinct;
            e.add(json("{\"id\":\"e" + id + "\",\"user\":\"u" + (id % 13) + "\",\"n\":" + i + "}"));
        }
        Collections.shuffle(e, random);
        for (int i = 0; i < BAD_PER_KIND; i++) {
            insert(e, random, new byte[] {'{', (byte) 0xC3, (byte) 0x28, (byte) ('0' + i), '}'});
            insert(e, random, json("not json " + i));
            insert(e, random, json("{\"user\":\"bad-" + i + "\"}"));
        }
        this.events = e;
        List<byte[]> m = new ArrayList<>();
        for (int n = 0; n < mailCount; n++) {
            m.add(json(String.format("{\"id\":\"mail-%07d\",\"from\":\"%s\"}", n, sender(n))));
        }
        for (int i = 0; i < BAD_PER_KIND; i++) {
            insert(m, random, new byte[] {(byte) 0xFF, (byte) 0xFE, (byte) ('0' + i)});
            insert(m, random, json(String.format("not json mail-%07d", 9_100_000 + i)));
            insert(m, random, json(String.format("{\"id\":\"mail-%07d\"}", 9_000_000 + i)));
        }
        this.mails = m;
    }

    /** Mail n's sender: every tenth is listed in the filter, the others are clean. */
    static String sender(int n) {
        return n % 10 == 0 ? "Spammer" + (n % 1000) + "@Bad.Example" : "user" + n + "@good.example";
    }

    /** The listed senders, normalized as the filter holds them. */
    static List<String> listed() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 1000; i += 10) {
            out.add("spammer" + i + "@bad.example");
        }
        return out;
    }

    private static void insert(List<byte[]> list, Random random, byte[] value) {
        list.add(random.nextInt(list.size() + 1), value);
    }

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Dedup: no id twice; only ids that were sent; the first occurrences missing (false positives)
     * at most {@link #bound}; every bad record once in the dead-letter topic.
     *
     * <p>Each distinct id is dropped only if its first occurrence is a false positive, with a
     * probability at most the configured rate p (the filter's rate at its capacity; lower before it
     * fills), so the missing count is a sum of independent Bernoulli trials with mean at most n p.
     */
    void checkDedup(String job, List<String> unique, List<String> dlq) {
        Set<String> ids = new HashSet<>();
        for (String record : unique) {
            Matcher m = EVENT_ID.matcher(record);
            assertThat(m.find()).as("%s: an event id in %s", job, record).isTrue();
            assertThat(ids.add(m.group(1))).as("%s: id %s written once", job, m.group(1)).isTrue();
            assertThat(Integer.parseInt(m.group(1).substring(1))).isBetween(0, distinct - 1);
        }
        double bound = bound(distinct, DEDUP_FPP);
        assertThat((double) (distinct - ids.size()))
                .as("%s: first occurrences missing (bound %.1f)", job, bound)
                .isBetween(0.0, bound);
        assertThat(new HashSet<>(dlq)).as("%s: dead letters distinct", job).hasSize(dlq.size());
        assertThat(dlq).as("%s: dead letters", job).hasSize(3 * BAD_PER_KIND);
        assertThat(dlq.stream().filter(d -> d.contains("not valid UTF-8 at byte ")))
                .hasSize(BAD_PER_KIND);
        assertThat(dlq.stream().filter(d -> d.contains("not JSON"))).hasSize(BAD_PER_KIND);
        assertThat(dlq.stream().filter(d -> d.contains("missing field 'id'")))
                .hasSize(BAD_PER_KIND);
        System.out.printf(
                "%s: %d of %d distinct ids written (%d false positives, bound %.1f), %d dead"
                        + " letters%n",
                job, ids.size(), distinct, distinct - ids.size(), bound, dlq.size());
    }

    /**
     * Screen: every mail exactly once in clean, flagged or dead letters; every listed sender
     * flagged (a Bloom filter has no false negatives); unlisted senders flagged at most the {@link
     * #bound} of the filter's rate {@code fpp}; every bad record once in the dead letters.
     */
    void checkScreen(List<String> clean, List<String> flagged, List<String> dlq, double fpp) {
        Map<Integer, String> outcome = new HashMap<>();
        Map<String, List<String>> topics = Map.of("clean", clean, "flagged", flagged, "dlq", dlq);
        topics.forEach(
                (topic, records) -> {
                    for (String record : records) {
                        Matcher m = MAIL_ID.matcher(record);
                        if (m.find()) {
                            int n = Integer.parseInt(m.group().substring(5));
                            assertThat(outcome.put(n, topic))
                                    .as("mail %d once (again in %s)", n, topic)
                                    .isNull();
                        }
                    }
                });
        assertThat(outcome).hasSize(mailCount + 2 * BAD_PER_KIND);
        int unlisted = 0;
        int falseFlags = 0;
        for (int n = 0; n < mailCount; n++) {
            if (n % 10 == 0) {
                assertThat(outcome.get(n)).as("listed sender of mail %d", n).isEqualTo("flagged");
            } else {
                unlisted++;
                falseFlags += "flagged".equals(outcome.get(n)) ? 1 : 0;
                assertThat(outcome.get(n)).as("mail %d", n).isIn("clean", "flagged");
            }
        }
        double bound = bound(unlisted, fpp);
        assertThat((double) falseFlags)
                .as("false flags (bound %.1f)", bound)
                .isLessThanOrEqualTo(bound);
        for (int i = 0; i < BAD_PER_KIND; i++) {
            assertThat(outcome.get(9_000_000 + i)).isEqualTo("dlq");
            assertThat(outcome.get(9_100_000 + i)).isEqualTo("dlq");
        }
        assertThat(new HashSet<>(dlq)).as("screen: dead letters distinct").hasSize(dlq.size());
        assertThat(dlq).as("screen: dead letters").hasSize(3 * BAD_PER_KIND);
        assertThat(dlq.stream().filter(d -> d.contains("not valid UTF-8 at byte ")))
                .hasSize(BAD_PER_KIND);
        System.out.printf(
                "screen: %d clean, %d flagged (%d unlisted senders flagged, bound %.1f), %d dead"
                        + " letters%n",
                clean.size(), flagged.size(), falseFlags, bound, dlq.size());
    }

    /**
     * The most that a sum X of independent Bernoulli trials with mean at most {@code n p} may
     * count: k - 1 for the smallest k that X reaches with probability below 1e-6, by the Chernoff
     * bound P(X >= k) <= e^-mu (e mu / k)^k for k > mu (Mitzenmacher and Upfal, Probability and
     * Computing, Theorem 4.4). Valid for small means too, where a normal approximation is not; a
     * failure means a bug, not bad luck.
     */
    static double bound(int n, double p) {
        double mu = n * p;
        int k = (int) Math.floor(mu) + 1;
        while (-mu + k * Math.log(Math.E * mu / k) > Math.log(1e-6)) {
            k++;
        }
        return k - 1;
    }
}
