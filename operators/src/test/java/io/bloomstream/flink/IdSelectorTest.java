package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Tests for {@link IdSelector}'s selectors of ids that are not hashed as bytes. */
class IdSelectorTest {

    private static final Hasher HASHER = Hasher.xxh3(Hasher.DEFAULT_SEED);

    @Test
    void nullUuidOrBitsIsABadEvent() {
        assertThat(IdSelector.<UUID>ofUuid(u -> u).hash(null, HASHER)).isNull();
        assertThat(IdSelector.<Hash128>ofBits128(h -> h).hash(null, HASHER)).isNull();
    }

    @Test
    void mixingIsInvertibleSoDistinctBitsNeverCollide() {
        // Sequential and time-ordered inputs (the worst case for a weak mix): no two 128-bit
        // inputs may give the same (h1, h2); mix128 is a bijection, so any collision is a bug.
        Set<Hash128> seen = new HashSet<>();
        for (long hi = 0; hi < 300; hi++) {
            for (long lo = 0; lo < 300; lo++) {
                assertThat(seen.add(IdSelector.mix128(hi, lo, 7))).isTrue();
            }
        }
    }

    @Test
    void theSeedChangesEveryHash() {
        UUID u = new UUID(1, 2);
        Hash128 a = IdSelector.<UUID>ofUuid(x -> x).hash(u, Hasher.xxh3(1));
        Hash128 b = IdSelector.<UUID>ofUuid(x -> x).hash(u, Hasher.xxh3(2));
        assertThat(a.h1()).isNotEqualTo(b.h1());
        assertThat(a.h2()).isNotEqualTo(b.h2());
    }

    /**
     * Time-ordered (v7-like: shared high bits, a counter in the low bits) UUIDs in a filter sized
     * for them at 1%: no false negatives, and false positives among 100,000 fresh UUIDs within the
     * binomial bound around the filter's own expected rate (mean + 5 sd: a chance of about 3e-7 for
     * a correct mix), as for ids hashed by XXH3.
     */
    @Test
    void timeOrderedUuidsGiveTheConfiguredRate() {
        int n = 50_000;
        int probes = 100_000;
        BloomFilter filter = BloomFilter.create(n, 0.01);
        IdSelector<UUID> ids = IdSelector.ofUuid(u -> u);
        long base = 0x0190_0000_0000_7000L;
        for (int i = 0; i < n; i++) {
            Hash128 h = ids.hash(new UUID(base + (i >>> 12), 0x8000_0000_0000_0000L | i), HASHER);
            filter.add(h.h1(), h.h2());
        }
        for (int i = 0; i < n; i++) {
            Hash128 h = ids.hash(new UUID(base + (i >>> 12), 0x8000_0000_0000_0000L | i), HASHER);
            assertThat(filter.mightContain(h.h1(), h.h2())).isTrue();
        }
        double p = filter.expectedFpp();
        int falsePositives = 0;
        Random random = new Random(42);
        for (int i = 0; i < probes; i++) {
            Hash128 h = ids.hash(new UUID(base + 100 + (i >>> 12), random.nextLong()), HASHER);
            if (filter.mightContain(h.h1(), h.h2())) {
                falsePositives++;
            }
        }
        double mean = probes * p;
        assertThat((double) falsePositives)
                .isLessThan(mean + 5 * Math.sqrt(mean * (1 - p)))
                .isGreaterThan(mean - 5 * Math.sqrt(mean * (1 - p)));
    }
}
