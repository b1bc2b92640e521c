package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link UrlNormalizer}. */
class UrlNormalizerTest {

    @ParameterizedTest
    @CsvSource({
        "HTTP://Example.COM/a, http://example.com/a",
        "https://example.com:443/a, https://example.com/a",
        "http://example.com:80/a, http://example.com/a",
        "http://example.com:8080/a, http://example.com:8080/a",
        "https://example.com/a#frag, https://example.com/a",
        "https://example.com, https://example.com/",
        "https://example.com./a, https://example.com/a",
        "https://example.com/a/./b/../c, https://example.com/a/c",
        "https://example.com/tmp/../news/./1, https://example.com/news/1",
        "https://example.com/%7Euser/%2f, https://example.com/~user/%2F",
        "https://example.com/a?, https://example.com/a",
        "https://example.com/A/B?Q=1&a=2, https://example.com/A/B?Q=1&a=2",
        "'  https://example.com/x  ', https://example.com/x",
        "https://user@example.com/x, https://user@example.com/x"
    })
    void normalizesSpellingsOfOneResource(String raw, String expected) throws Exception {
        assertThat(UrlNormalizer.normalize(raw)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "http://",
                "htp//missing-colon.com/x",
                "http://bad host.com/page",
                "://no-scheme.org/",
                "mailto:someone@example.com",
                "ftp://example.com/file",
                "just some words"
            })
    void rejectsMalformedUrls(String raw) {
        assertThatThrownBy(() -> UrlNormalizer.normalize(raw))
                .isInstanceOf(UrlNormalizer.MalformedUrl.class);
    }

    @Test
    void hostOfANormalizedUrl() throws Exception {
        assertThat(UrlNormalizer.host("https://example.com:8080/a")).isEqualTo("example.com");
        assertThat(UrlNormalizer.host("https://u@example.com/a")).isEqualTo("example.com");
        assertThat(UrlNormalizer.host(UrlNormalizer.normalize("HTTP://A.b.C"))).isEqualTo("a.b.c");
    }

    @Test
    void removesDotSegmentsAsTheRfcLoopOnRandomPaths() {
        // The RFC 3986 section 5.2.4 loop, written as the RFC states it (quadratic: each step
        // removes from the front of the input buffer), against the linear implementation, on
        // paths made of the characters that matter: '/', '.', and one other.
        Random random = new Random(29);
        char[] alphabet = {'/', '/', '.', '.', 'a', 'b'};
        for (int trial = 0; trial < 20_000; trial++) {
            char[] path = new char[1 + random.nextInt(24)];
            for (int i = 0; i < path.length; i++) {
                path[i] = alphabet[random.nextInt(alphabet.length)];
            }
            String p = new String(path);
            assertThat(UrlNormalizer.removeDotSegments(p)).as(p).isEqualTo(rfcLoop(p));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void normalizesATwoMegabyteUrlInLinearTime() throws Exception {
        // 2 MB of segments and dot segments: the quadratic loop took 6 s for 160 KB, so about
        // 15 minutes for this; the linear one takes milliseconds, far inside the generous bound.
        String segments = "/seg/./x/../y".repeat(2_000_000 / 13);
        String normalized = UrlNormalizer.normalize("https://example.com" + segments + "/%7e");
        assertThat(normalized)
                .startsWith("https://example.com/seg/y/seg/y/")
                .endsWith("/seg/y/~")
                .hasSize("https://example.com".length() + "/seg/y".length() * (2_000_000 / 13) + 2);
    }

    /** RFC 3986 section 5.2.4, step by step on a shrinking input buffer (the reference). */
    private static String rfcLoop(String path) {
        StringBuilder in = new StringBuilder(path);
        StringBuilder out = new StringBuilder();
        while (in.length() > 0) {
            String s = in.toString();
            if (s.startsWith("../")) {
                in.delete(0, 3);
            } else if (s.startsWith("./")) {
                in.delete(0, 2);
            } else if (s.startsWith("/./")) {
                in.delete(0, 2);
            } else if (s.equals("/.")) {
                in.replace(0, 2, "/");
            } else if (s.startsWith("/../")) {
                in.delete(0, 3);
                out.setLength(Math.max(out.lastIndexOf("/"), 0));
            } else if (s.equals("/..")) {
                in.replace(0, 3, "/");
                out.setLength(Math.max(out.lastIndexOf("/"), 0));
            } else if (s.equals(".") || s.equals("..")) {
                in.setLength(0);
            } else {
                int next = s.indexOf('/', s.charAt(0) == '/' ? 1 : 0);
                int end = next < 0 ? s.length() : next;
                out.append(s, 0, end);
                in.delete(0, end);
            }
        }
        return out.length() == 0 ? "/" : out.toString();
    }
}
