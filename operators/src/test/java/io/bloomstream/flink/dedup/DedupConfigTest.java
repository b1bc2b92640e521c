package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.Shards;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Tests for {@link DedupConfig}. */
class DedupConfigTest {

    @Test
    void anAutomaticCacheHoldsTheExpectedStatePlusAQuarterWithinItsBounds() {
        DedupConfig auto = DedupConfig.builder().expectedItems(100_000_000L).fpp(0.01).build();
        long gib = 1L << 30;
        assertThat(auto.cacheBytes()).isEqualTo(DedupConfig.AUTO_CACHE_BYTES);
        // state not known (per-key dedup): the default
        assertThat(auto.cacheBytesFor(0, 16 * gib)).isEqualTo(DedupConfig.DEFAULT_CACHE_BYTES);
        // small state: never below the default
        assertThat(auto.cacheBytesFor(1 << 20, 16 * gib))
                .isEqualTo(DedupConfig.DEFAULT_CACHE_BYTES);
        // 137 MB of filters: 137 MB + 25%
        assertThat(auto.cacheBytesFor(137_000_000L, 16 * gib)).isEqualTo(171_250_000L);
        // at most a quarter of the heap
        assertThat(auto.cacheBytesFor(4 * gib, 2 * gib)).isEqualTo(gib / 2);
        // a small heap still gets the default
        assertThat(auto.cacheBytesFor(4 * gib, 128L << 20))
                .isEqualTo(DedupConfig.DEFAULT_CACHE_BYTES);
        // a configured budget is kept as set, 0 included
        DedupConfig.Builder b = DedupConfig.builder().expectedItems(1000).fpp(0.01);
        assertThat(b.cacheBytes(0).build().cacheBytesFor(gib, 16 * gib)).isZero();
        assertThat(b.cacheBytes(600).build().cacheBytesFor(gib, 16 * gib)).isEqualTo(600);
    }

    @Test
    void defaultsAreSensible() {
        DedupConfig c = DedupConfig.builder().build();
        assertThat(c.expectedItems()).isEqualTo(1_000_000);
        assertThat(c.fpp()).isEqualTo(0.01);
        assertThat(c.growth()).isEqualTo(FilterSizing.Growth.SCALABLE);
        assertThat(c.hasRetention()).isFalse();
        assertThat(c.generations()).isEqualTo(1);
        assertThat(c.toString()).contains("retention=forever").contains("fpp=0.01");
    }

    @Test
    void rejectsOutOfRangeValuesNamingThem() {
        assertThatThrownBy(() -> DedupConfig.builder().expectedItems(0))
                .hasMessage("expectedItems must be >= 1, was 0");
        assertThatThrownBy(() -> DedupConfig.builder().fpp(0))
                .hasMessage("fpp must be in (0, 1), was 0.0");
        assertThatThrownBy(() -> DedupConfig.builder().pageBits(100))
                .hasMessageContaining("was 100");
        assertThatThrownBy(() -> DedupConfig.builder().scalable(1, 0.5))
                .hasMessage("growthFactor must be in [2, 16], was 1");
        assertThatThrownBy(() -> DedupConfig.builder().generations(1))
                .hasMessage("generations must be in [2, 46], was 1");
        assertThatThrownBy(() -> DedupConfig.builder().shards(0))
                .hasMessage("shards must be in [1, 2^20], was 0");
        assertThatThrownBy(
                        () -> DedupConfig.builder().retention(Duration.ZERO, TimeDomain.EVENT_TIME))
                .hasMessageContaining("retention must be from 1 ms to 100 years");
    }

    @Test
    void aFilterTooLargeForOneKeyFailsAtBuildTime() {
        assertThatThrownBy(
                        () ->
                                DedupConfig.builder()
                                        .expectedItems(Long.MAX_VALUE / 4)
                                        .fpp(1e-9)
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot size a filter");
    }

    @Test
    void globalModeSizesEachShardForItsShareOfTheTotal() {
        // 1.5 * 10^11 ids over 1024 shards: about 1.46 * 10^8 per shard, which one filter holds;
        // one filter of all of them (a first stage at 0.9% of about 1.5 * 10^12 bits) is past
        // Sizing.MAX_BITS (2^40)
        DedupConfig config = DedupConfig.builder().expectedItems(150_000_000_000L).build();
        long share = BloomDedup.itemsPerShard(config.expectedItems(), config.shards());
        assertThat(share).isBetween(146_484_375L, 146_600_000L);
        config.checkFits(share, true);
        // the same total as one key's filter is too large, and the message says what is meant
        assertThatThrownBy(() -> config.checkFits(config.expectedItems(), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "cannot size a filter for one key (expectedItems 150000000000)")
                .hasMessageContaining("at a false-positive rate of");
    }

    @Test
    void aShardTooLargeNamesTheShardsShare() {
        assertThatThrownBy(
                        () ->
                                DedupConfig.builder()
                                        .expectedItems(Long.MAX_VALUE / 4)
                                        .shards(1)
                                        .fpp(1e-9)
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("each of the 1 shards of global mode")
                .hasMessageContaining("ids at a false-positive rate of");
    }

    @Test
    void retentionGenerationsSplitTheRateAndTheWindow() {
        DedupConfig c =
                DedupConfig.builder()
                        .fpp(0.01)
                        .retention(Duration.ofHours(24), TimeDomain.PROCESSING_TIME)
                        .generations(4)
                        .build();
        assertThat(c.generationMillis()).isEqualTo(Duration.ofHours(8).toMillis());
        assertThat(c.generations()).isEqualTo(4); // a budget of 0.01 / 4 per generation
        // stage rates of one generation sum to at most its budget
        double sum = 0;
        for (int i = 0; i < 20; i++) {
            sum += c.stageSpec(1000, i).expectedFpp(c.stageCapacity(1000, i));
        }
        assertThat(sum).isLessThanOrEqualTo(0.0025);
    }

    @Test
    void generationsCoverTheWholeRetentionWhenItDoesNotDivideEvenly() {
        DedupConfig c =
                DedupConfig.builder()
                        .retention(Duration.ofMillis(1001), TimeDomain.EVENT_TIME)
                        .generations(4)
                        .build();
        // (G - 1) generations must span at least the retention: 3 x 334 >= 1001
        assertThat(3 * c.generationMillis()).isGreaterThanOrEqualTo(1001);
        DedupConfig nanos =
                DedupConfig.builder()
                        .retention(Duration.ofNanos(1_500_000), TimeDomain.EVENT_TIME)
                        .build();
        assertThat(nanos.generationMillis()).isEqualTo(2);
    }

    @Test
    void automaticStatePagesAreAtLeast2048BitsOrClassic() {
        DedupConfig c = DedupConfig.builder().fpp(0.01).fixed().build();
        assertThat(c.stageSpec(1_000_000, 0).pageBits()).isEqualTo(2048);
        assertThat(c.stageSpec(100, 0).isClassic()).isTrue();
        // an explicit page size is kept
        DedupConfig explicit = DedupConfig.builder().fpp(0.01).fixed().pageBits(512).build();
        assertThat(explicit.stageSpec(1_000_000, 0).pageBits()).isEqualTo(512);
    }

    @Test
    void shardsSpreadIdsEvenly() {
        int shards = 64;
        int[] counts = new int[shards];
        for (int i = 0; i < 64_000; i++) {
            counts[
                    Shards.shardOf(
                            io.bloomstream.filter.FilterSpec.mix(("id-" + i).hashCode()),
                            shards)]++;
        }
        // 1000 expected per shard; 4.5 sigma of a binomial(64000, 1/64) is 141.
        for (int c : counts) {
            assertThat(c).isBetween(859, 1141);
        }
    }

    @Test
    void refusesGenerationsAndLatenessThatNeedMoreSlotsThanAKeyKeepsForOnTimeEvents() {
        // G = 24, A = R: (G - 1)(1 + A/R) + 2 = 48 slots is the most; G = 25 needs 50.
        DedupConfig.builder()
                .retention(Duration.ofHours(1), TimeDomain.EVENT_TIME)
                .generations(24)
                .allowedLateness(Duration.ofHours(1))
                .build();
        assertThatThrownBy(
                        () ->
                                DedupConfig.builder()
                                        .retention(Duration.ofHours(1), TimeDomain.EVENT_TIME)
                                        .generations(25)
                                        .allowedLateness(Duration.ofHours(1))
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("generations 25 and allowedLateness PT1H")
                .hasMessageContaining("need 50 generation slots");
        assertThatThrownBy(() -> DedupConfig.builder().generations(47))
                .hasMessageContaining("generations must be in [2, 46], was 47");
        assertThatThrownBy(() -> DedupConfig.builder().allowedLateness(Duration.ofDays(40_000)))
                .hasMessageContaining("allowedLateness must be from 0 to 100 years");
    }

    @Test
    void resetRetentionOnDuplicateNeedsARetention() {
        assertThatThrownBy(() -> DedupConfig.builder().resetRetentionOnDuplicate(true).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resetRetentionOnDuplicate needs a retention");
        DedupConfig c =
                DedupConfig.builder()
                        .retention(
                                java.time.Duration.ofHours(1),
                                io.bloomstream.flink.TimeDomain.EVENT_TIME)
                        .resetRetentionOnDuplicate(true)
                        .build();
        org.assertj.core.api.Assertions.assertThat(c.resetRetentionOnDuplicate()).isTrue();
        org.assertj.core.api.Assertions.assertThat(c.toString())
                .contains("resetRetentionOnDuplicate=true");
    }
}
