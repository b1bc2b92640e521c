package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
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
}
