package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Test;

/** Tests for {@link ShardScalarFunction}. */
class ShardScalarFunctionTest {

    private final ShardScalarFunction shard = new ShardScalarFunction();

    /** The shard is part of the state of a dedup partitioned by it: these values never change. */
    @Test
    void shardsAreStable() {
        assertThat(
                        new int[] {
                            shard.eval("evt-0115739359"),
                            shard.eval("evt-0115739359", 8),
                            shard.eval(42L),
                            shard.eval("abc".getBytes(StandardCharsets.UTF_8), 16)
                        })
                .containsExactly(GOLDEN);
    }

    private static final int[] GOLDEN = {85, 0, 364, 12};

    /**
     * The shard is XXH3-64 with {@link ShardScalarFunction#SEED}, checked against an independent
     * XXH3.
     */
    @Test
    void shardIsSeededXxh3OfTheUtf8Bytes() {
        LongHashFunction xxh3 = LongHashFunction.xx3(ShardScalarFunction.SEED);
        for (String s : new String[] {"a", "evt-0115739359", "évènement"}) {
            long h = xxh3.hashBytes(s.getBytes(StandardCharsets.UTF_8));
            assertThat(shard.eval(s, 1000)).isEqualTo((int) (((h >>> 32) * 1000) >>> 32));
        }
        long h = xxh3.hashLong(42L);
        assertThat(shard.eval(42L, 1000)).isEqualTo((int) (((h >>> 32) * 1000) >>> 32));
    }

    @Test
    void stringsAndTheirUtf8BytesShareAShard() {
        for (String s : new String[] {"a", "évènement", "evt-1", "日本"}) {
            assertThat(shard.eval(s, 1000))
                    .isEqualTo(shard.eval(s.getBytes(StandardCharsets.UTF_8), 1000));
        }
    }

    @Test
    void nullGivesNull() {
        assertThat(shard.eval((String) null)).isNull();
        assertThat(shard.eval((byte[]) null, 4)).isNull();
        assertThat(shard.eval((Long) null)).isNull();
        assertThat(shard.eval("a", null)).isNull();
    }

    @Test
    void nonPositiveShardsFailNamingTheArgument() {
        assertThatThrownBy(() -> shard.eval("a", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shards")
                .hasMessageContaining("0");
    }

    /**
     * 200,000 consecutive ids over 64 shards: each count is Binomial(n, 1/64) for a uniform hash,
     * and stays within 4.5 standard deviations of n/64 (a false alarm below 1e-3 over 64 shards).
     */
    @Test
    void spreadsIdsEvenly() {
        int shards = 64;
        int n = 200_000;
        long[] counts = new long[shards];
        for (int i = 0; i < n; i++) {
            int s = shard.eval("evt-" + i, shards);
            assertThat(s).isBetween(0, shards - 1);
            counts[s]++;
        }
        double p = 1.0 / shards;
        double sigma = Math.sqrt(n * p * (1 - p));
        for (long c : counts) {
            assertThat(Math.abs(c - n * p)).isLessThanOrEqualTo(4.5 * sigma);
        }
    }
}
