package io.bloomstream.filter;

import java.nio.charset.StandardCharsets;

/**
 * The one place where strings become bytes for hashing: generalized UTF-8 (WTF-8). A well-formed
 * string encodes exactly as {@code s.getBytes(UTF_8)}, so hashes of well-formed strings, golden
 * files and savepoints are unaffected; a lone surrogate (a high surrogate not followed by a low
 * one, or a low one not preceded by a high one) encodes as its own 3-byte sequence {@code ED A0..BF
 * 80..BF}, which valid UTF-8 never contains. The encoding is therefore injective: no two different
 * Java strings share a byte encoding, unlike {@code getBytes(UTF_8)}, which turns every lone
 * surrogate into {@code '?'}.
 *
 * <p>See <a href="https://simonsapin.github.io/wtf-8/">The WTF-8 encoding</a> (S. Sapin), section
 * "Encoding from potentially ill-formed UTF-16".
 */
public final class Wtf8 {

    private Wtf8() {}

    /** The WTF-8 bytes of {@code s} (its UTF-8 bytes when it has no lone surrogate). */
    public static byte[] encode(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        // getBytes replaces each lone surrogate with '?': without a '?' there is none (fast path).
        for (byte b : utf8) {
            if (b == '?') {
                return hasLoneSurrogate(s) ? encodeSlow(s) : utf8;
            }
        }
        return utf8;
    }

    static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c)
                        && i + 1 < s.length()
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            }
        }
        return false;
    }

    private static byte[] encodeSlow(String s) {
        byte[] out = new byte[3 * s.length()]; // at most 3 bytes per char (a pair: 4 per 2)
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            int c = s.charAt(i);
            if (Character.isHighSurrogate((char) c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                c = Character.toCodePoint((char) c, s.charAt(++i));
            }
            if (c < 0x80) {
                out[n++] = (byte) c;
            } else if (c < 0x800) {
                out[n++] = (byte) (0xC0 | (c >> 6));
                out[n++] = (byte) (0x80 | (c & 0x3F));
            } else if (c < 0x10000) { // including a lone surrogate, as its 3-byte sequence
                out[n++] = (byte) (0xE0 | (c >> 12));
                out[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                out[n++] = (byte) (0x80 | (c & 0x3F));
            } else {
                out[n++] = (byte) (0xF0 | (c >> 18));
                out[n++] = (byte) (0x80 | ((c >> 12) & 0x3F));
                out[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                out[n++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }
}
