package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Tests for {@link ScalableBloomFilter}. */
class ScalableBloomFilterTest {

    @Test
    void compoundRateStaysWithinTargetAtHundredTimesInitialCapacity() {
        double fpp = 0.01;
        int initial = 10_000;
        ScalableBloomFilter f = ScalableBloomFilter.create(initial, fpp);
        for (long i = 0; i < 100L * initial; i++) {
            f.add(i);
        }
        assertThat(f.stages().size()).isBetween(6, 8);
        assertThat(f.expectedFpp()).isLessThanOrEqualTo(fpp);
        int probes = 1_000_000;
        long falsePositives = 0;
        for (long i = 0; i < probes; i++) {
            if (f.mightContain((1L << 40) + i)) {
                falsePositives++;
            }
        }
        assertThat(Binomial.atMost(falsePositives, probes, fpp))
                .as("%d false positives in %d probes", falsePositives, probes)
                .isTrue();
        // and the compound model predicts the measurement
        assertThat(Binomial.within(falsePositives, probes, f.expectedFpp())).isTrue();
    }

    @Test
    void stageTargetsFollowGrowthAndTightening() {
        ScalableBloomFilter f =
                ScalableBloomFilter.create(1000, 0.01, 4, 0.5, 512, Hasher.defaultHasher());
        assertThat(f.stageCapacity(0)).isEqualTo(1000);
        assertThat(f.stageCapacity(2)).isEqualTo(16_000);
        assertThat(f.stageFpp(0)).isEqualTo(0.005);
        assertThat(f.stageFpp(1)).isEqualTo(0.0025);
        double sum = 0;
        for (int i = 0; i < 60; i++) {
            sum += f.stageFpp(i);
        }
        assertThat(sum).isLessThanOrEqualTo(0.01);
    }

    @Test
    void defaultsCostLessMemoryThanRedisBloomDefaults() {
        // From 1e6 to 1e9 items (10 doublings): bits of all stages against a right-sized
        // classic filter for 1e9 items at 1%. Computed from stage specs, nothing allocated.
        double rightSized = Sizing.optimalBits(1_000_000_000L, 0.01);
        double ours = cascadeBits(ScalableBloomFilter.create(1_000_000, 0.01), 1e9) / rightSized;
        double redis =
                cascadeBits(
                                ScalableBloomFilter.create(
                                        1_000_000, 0.01, 2, 0.5, 512, Hasher.defaultHasher()),
                                1e9)
                        / rightSized;
        assertThat(redis).isGreaterThan(2.3);
        assertThat(ours).isLessThan(1.8);
    }

    static double cascadeBits(ScalableBloomFilter f, double items) {
        double bits = 0;
        double capacity = 0;
        for (int i = 0; capacity < items; i++) {
            bits += f.stageSpec(i).bits();
            capacity += f.stageCapacity(i);
        }
        return bits;
    }

    @Test
    void rejectsBadParameters() {
        Hasher h = Hasher.defaultHasher();
        assertThatThrownBy(() -> ScalableBloomFilter.create(10, 0.01, 1, 0.5, 512, h))
                .hasMessageContaining("growth must be in [2, 16], was 1");
        assertThatThrownBy(() -> ScalableBloomFilter.create(10, 0.01, 2, 1.0, 512, h))
                .hasMessageContaining("tightening must be in (0, 1), was 1.0");
        assertThatThrownBy(() -> ScalableBloomFilter.create(0, 0.01))
                .hasMessageContaining("expectedItems must be >= 1, was 0");
    }
}
