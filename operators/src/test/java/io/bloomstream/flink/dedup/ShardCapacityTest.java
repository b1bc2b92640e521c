package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.internal.Shards;
import org.junit.jupiter.api.Test;

/** Tests for {@link BloomDedup#itemsPerShard}. */
class ShardCapacityTest {

    @Test
    void headroomIsFourStandardDeviations() {
        assertThat(BloomDedup.itemsPerShard(1_000_000, 1024)).isEqualTo(977 + 126);
        assertThat(BloomDedup.itemsPerShard(1, 1024)).isEqualTo(1 + 4);
    }

    /**
     * 10^6 distinct ids through the global mode's shard selector: no shard may pass its capacity at
     * the expected total. The fullest of 1024 binomial shards is about 3.2 sd above the mean, so
     * exceeding 4 sd has a chance of about 3% for the whole set under a correct mix; the seed is
     * fixed, so the test is deterministic, and with capacity = mean about half would exceed.
     */
    @Test
    void noShardPassesItsCapacityAtTheExpectedTotal() {
        int shards = 1024;
        long n = 1_000_000;
        long[] load = new long[shards];
        for (long i = 0; i < n; i++) {
            load[Shards.shardOf(FilterSpec.mix(i * 0x9E3779B97F4A7C15L), shards)]++;
        }
        long capacity = BloomDedup.itemsPerShard(n, shards);
        long over = 0;
        long overMean = 0;
        for (long l : load) {
            over += l > capacity ? 1 : 0;
            overMean += l > (n + shards - 1) / shards ? 1 : 0;
        }
        assertThat(over).isZero();
        assertThat(overMean).as("without headroom").isGreaterThan(shards / 3);
    }
}
