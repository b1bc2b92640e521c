package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import net.openhft.hashing.LongTupleHashFunction;
import org.junit.jupiter.api.Test;

/** Tests for {@link Hasher} and {@link HashStrategy}. */
class HasherTest {

    @Test
    void strategyIdsNeverChange() {
        // These ids are written into every encoded filter: changing one breaks stored filters.
        assertThat(HashStrategy.XXH3_128.id()).isEqualTo(1);
        assertThat(HashStrategy.SIPHASH_2_4.id()).isEqualTo(2);
        assertThat(HashStrategy.values()).hasSize(2);
        assertThat(HashStrategy.fromId(1)).isEqualTo(HashStrategy.XXH3_128);
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
