package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link Wtf8} and the string hashing of {@link Hasher} that goes through it. */
class Wtf8Test {

    private static final Hasher[] HASHERS = {Hasher.defaultHasher(), Hasher.sipHash24(1, 2)};

    @Test
    void loneSurrogateDoesNotHashLikeQuestionMarkOrReplacementCharacter() {
        for (Hasher h : HASHERS) {
            assertThat(h.hash("a\uD800")).isNotEqualTo(h.hash("a?"));
            assertThat(h.hash("a\uD800")).isNotEqualTo(h.hash("a\uFFFD"));
            assertThat(h.hash("a?")).isNotEqualTo(h.hash("a\uFFFD"));
            assertThat(h.hash("\uDC00x")).isNotEqualTo(h.hash("?x"));
        }
    }

    @Test
    void differentLoneSurrogatesHashDifferently() {
        for (Hasher h : HASHERS) {
            assertThat(h.hash("\uD800")).isNotEqualTo(h.hash("\uDBFF"));
            assertThat(h.hash("\uDC00")).isNotEqualTo(h.hash("\uDFFF"));
            assertThat(h.hash("\uD800")).isNotEqualTo(h.hash("\uDC00"));
        }
    }

    @Test
    void loneSurrogateIsEncodedAsItsThreeByteSequence() {
        assertThat(Wtf8.encode("a\uD800")).containsExactly('a', 0xED, 0xA0, 0x80);
        assertThat(Wtf8.encode("\uDFFFb")).containsExactly(0xED, 0xBF, 0xBF, 'b');
        // A low surrogate before a high one is two lone surrogates, not a pair.
        assertThat(Wtf8.encode("\uDC00\uD800")).containsExactly(0xED, 0xB0, 0x80, 0xED, 0xA0, 0x80);
    }

    @Test
    void wellFormedStringsWithSurrogatePairsHashAsTheirUtf8Bytes() {
        String pair = "id-\uD83D\uDE00-ok?"; // U+1F600 and a real question mark
        for (Hasher h : HASHERS) {
            assertThat(h.hash(pair)).isEqualTo(h.hash(pair.getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(Wtf8.encode(pair)).isEqualTo(pair.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void encodingIsUtf8ForWellFormedStringsAndInjectiveOnSeededRandomStrings() {
        // Strings of 0..6 chars drawn mostly from a small alphabet full of the characters that
        // could collide ('?', U+FFFD, both surrogate halves at their range ends), so that many
        // strings are generated twice and many near-misses are compared.
        char[] alphabet = {
            'a', '?', '\uFFFD', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\u00E9', '\u0000'
        };
        SplittableRandom random = new SplittableRandom(42);
        Map<String, String> byEncoding = new HashMap<>();
        int wellFormed = 0;
        for (int i = 0; i < 200_000; i++) {
            char[] chars = new char[random.nextInt(7)];
            for (int j = 0; j < chars.length; j++) {
                chars[j] =
                        random.nextInt(8) == 0
                                ? (char) random.nextInt(Character.MAX_VALUE + 1)
                                : alphabet[random.nextInt(alphabet.length)];
            }
            String s = new String(chars);
            byte[] encoded = Wtf8.encode(s);
            String previous =
                    byEncoding.putIfAbsent(new String(encoded, StandardCharsets.ISO_8859_1), s);
            assertThat(previous).as("same encoding as %s", escape(s)).isIn(null, s);
            if (isWellFormed(s)) {
                wellFormed++;
                assertThat(encoded).isEqualTo(s.getBytes(StandardCharsets.UTF_8));
            }
        }
        assertThat(wellFormed).as("the sample covers well-formed strings").isGreaterThan(10_000);
        assertThat(byEncoding.size()).as("and many distinct ones").isGreaterThan(50_000);
    }

    private static boolean isWellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(String.format("\\u%04X", (int) c));
        }
        return b.toString();
    }
}
