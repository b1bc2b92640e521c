package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import net.openhft.hashing.LongHashFunction;
import net.openhft.hashing.LongTupleHashFunction;
import org.junit.jupiter.api.Test;

/** Tests for {@link Hasher} and {@link HashStrategy}. */
class HasherTest {

    @Test
    void strategyIdsNeverChange() {
        // These ids are written into every encoded filter: changing one breaks stored filters.
        assertThat(HashStrategy.XXH3_128.id()).isEqualTo(1);
        assertThat(HashStrategy.SIPHASH_2_4.id()).isEqualTo(2);
        assertThat(HashStrategy.XXH3_64.id()).isEqualTo(3);
        assertThat(HashStrategy.values()).hasSize(3);
        assertThat(HashStrategy.fromId(1)).isEqualTo(HashStrategy.XXH3_128);
        assertThat(HashStrategy.fromId(3)).isEqualTo(HashStrategy.XXH3_64);
    }

    @Test
    void xxh3x64MatchesAnIndependentImplementation() {
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 2000; i++) {
            long seed = i == 0 ? Hasher.DEFAULT_SEED : random.nextLong();
            byte[] data = new byte[random.nextInt(300)];
            random.nextBytes(data);
            Hasher h = Hasher.xxh3_64(seed);
            long expected = LongHashFunction.xx3(seed).hashBytes(data);
            assertThat(h.hash64(data, 0, data.length)).isEqualTo(expected);
            assertThat(h.hash(data)).isEqualTo(new Hash128(expected, expected));
        }
    }

    @Test
    void xxh3x64HashesLongsAsLittleEndianBytesAndStringsAsUtf16Le() {
        Hasher h = Hasher.xxh3_64(5);
        byte[] le = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
        assertThat(h.hash64(0x0102030405060708L)).isEqualTo(h.hash64(le, 0, 8));
        assertThat(h.hash(0x0102030405060708L).h1()).isEqualTo(h.hash64(le, 0, 8));
        for (String s : new String[] {"", "grüße", "a\uD800", "\uDC00b", "\uD83D\uDE00"}) {
            byte[] utf16 = codeUnitsLittleEndian(s); // getBytes(UTF_16LE) would replace lone ones
            assertThat(h.hash64(s)).as(s).isEqualTo(h.hash64(utf16, 0, utf16.length));
            assertThat(h.hash(s).h1()).isEqualTo(h.hash64(s));
        }
        // Lone surrogates are kept, never replaced by '?': distinct strings, distinct inputs.
        assertThat(h.hash64("a\uD800")).isNotEqualTo(h.hash64("a?"));
        assertThat(h.hash64(new StringBuilder("grüße"))).isEqualTo(h.hash64("grüße"));
    }

    private static byte[] codeUnitsLittleEndian(String s) {
        byte[] b = new byte[2 * s.length()];
        for (int i = 0; i < s.length(); i++) {
            b[2 * i] = (byte) s.charAt(i);
            b[2 * i + 1] = (byte) (s.charAt(i) >>> 8);
        }
        return b;
    }

    @Test
    void only64BitHashersGive64BitHashes() {
        assertThat(Hasher.xxh3_64(1).is64Bit()).isTrue();
        assertThat(Hasher.xxh3(1).is64Bit()).isFalse();
        assertThatThrownBy(() -> Hasher.xxh3(1).hash64(1L))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("XXH3_128");
        assertThat(Hasher.forUnkeyed(HashStrategy.XXH3_64, 9)).isEqualTo(Hasher.xxh3_64(9));
        assertThat(Hasher.xxh3_64(9)).isNotEqualTo(Hasher.xxh3(9));
    }

    @Test
    void xxh3MatchesTheReferenceVectorForEmptyInput() {
        // XXH3_128bits("", seed 0) = 99aa06d3014798d86001c324468d497f (xxHash reference).
        Hash128 h = Hasher.xxh3(0).hash(new byte[0]);
        assertThat(h.h1()).isEqualTo(0x99aa06d3014798d8L);
        assertThat(h.h2()).isEqualTo(0x6001c324468d497fL);
    }

    @Test
    void xxh3MatchesAnIndependentImplementation() {
        // Zero-Allocation-Hashing's XXH3-128 is a separate implementation: it returns
        // {low64, high64}.
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 2000; i++) {
            long seed = i == 0 ? Hasher.DEFAULT_SEED : random.nextLong();
            byte[] data = new byte[random.nextInt(300)];
            random.nextBytes(data);
            long[] expected = LongTupleHashFunction.xx128(seed).hashBytes(data);
            Hash128 actual = Hasher.xxh3(seed).hash(data);
            assertThat(actual.h1()).isEqualTo(expected[1]);
            assertThat(actual.h2()).isEqualTo(expected[0]);
        }
    }

    @Test
    void defaultHashOfAFixedInputNeverChanges() {
        // Locks the default strategy and seed: cross-checked with Zero-Allocation-Hashing above.
        long[] zah =
                LongTupleHashFunction.xx128(0x626c6f6f6d737472L)
                        .hashBytes("bloomstream".getBytes(StandardCharsets.UTF_8));
        Hash128 h = Hasher.defaultHasher().hash("bloomstream");
        assertThat(h).isEqualTo(new Hash128(zah[1], zah[0]));
        assertThat(Hasher.DEFAULT_SEED).isEqualTo(0x626c6f6f6d737472L);
    }

    @Test
    void stringsHashAsUtf8AndLongsAsLittleEndianBytes() {
        for (Hasher h : new Hasher[] {Hasher.xxh3(5), Hasher.sipHash24(1, 2)}) {
            assertThat(h.hash("grüße")).isEqualTo(h.hash("grüße".getBytes(StandardCharsets.UTF_8)));
            byte[] le = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
            assertThat(h.hash(0x0102030405060708L)).isEqualTo(h.hash(le));
        }
    }

    @Test
    void seedsAndKeysChangeTheHash() {
        assertThat(Hasher.xxh3(1).hash("x")).isNotEqualTo(Hasher.xxh3(2).hash("x"));
        assertThat(Hasher.sipHash24(1, 2).hash("x")).isNotEqualTo(Hasher.sipHash24(1, 3).hash("x"));
        assertThat(Hasher.sipHash24(1, 2).seed()).isNotEqualTo(Hasher.sipHash24(1, 3).seed());
    }

    @Test
    void keyedHasherNeverPrintsItsKey() {
        assertThat(Hasher.sipHash24(0x1234567890L, 0x42L).toString())
                .doesNotContain("1234567890")
                .contains("keyCheck");
    }
}
