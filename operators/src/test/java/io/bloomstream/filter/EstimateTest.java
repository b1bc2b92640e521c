package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Tests for {@link Estimate} on real filters. */
class EstimateTest {

    static Stream<Long> cardinalities() {
        return Stream.of(100L, 1_000L, 10_000L, 100_000L, 1_000_000L, 10_000_000L);
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("cardinalities")
    void estimateIsWithinThreeStandardErrorsAtHalfFill(long n) {
        // A filter sized optimally for n items is half full after n items (k n / m = ln 2).
        // Bound: |n_hat - n| <= 3 se (linear counting is asymptotically normal; Whang et al.).
        BloomFilter f = BloomFilter.create(FilterSpec.forItems(n, 0.01));
        for (long i = 0; i < n; i++) {
            f.add(i * 0x9E3779B97F4A7C15L);
        }
        Estimate e = f.estimate();
        assertThat(e.fillRatio()).isBetween(0.45, 0.55);
        assertThat(e.valid()).isTrue();
        assertThat(Math.abs(e.estimate() - n))
                .as("estimate %.1f of %d, se %.2f", e.estimate(), n, e.standardError())
                .isLessThanOrEqualTo(3 * e.standardError());
        assertThat(e.lower()).isLessThanOrEqualTo(n);
        assertThat(e.upper()).isGreaterThanOrEqualTo(n);
    }

    @Test
    void emptyFilterEstimatesZero() {
        Estimate e = BloomFilter.create(1000, 0.01).estimate();
        assertThat(e.estimate()).isZero();
        assertThat(e.standardError()).isZero();
        assertThat(e.valid()).isTrue();
    }

    @Test
    void fullFilterIsInvalidAndFinite() {
        BloomFilter f =
                BloomFilter.create(FilterSpec.builder().bits(1024).hashes(3).pageBits(512).build());
        for (int i = 0; i < 100_000; i++) {
            f.add(i);
        }
        Estimate e = f.estimate();
        assertThat(e.setCells()).isEqualTo(1024);
        assertThat(e.valid()).isFalse();
        assertThat(e.estimate()).isFinite().isPositive();
        assertThat(e.standardError()).isFinite();
    }

    @Test
    void nearlyFullFilterBecomesInvalid() {
        BloomFilter f = BloomFilter.create(1000, 0.01);
        boolean sawInvalid = false;
        for (int i = 0; i < 20_000 && !sawInvalid; i++) {
            f.add(i);
            sawInvalid = !f.estimate().valid();
        }
        assertThat(sawInvalid).isTrue();
        assertThat(f.estimate().cells() - f.estimate().setCells()).isLessThan(f.spec().bits() / 10);
    }

    @Test
    void cascadeEstimateIsTheSumOfStagesAndStaysAccurateAtHundredTimesCapacity() {
        long initial = 1000;
        ScalableBloomFilter f = ScalableBloomFilter.create(initial, 0.01);
        long n = 100 * initial;
        for (long i = 0; i < n; i++) {
            f.add(i);
        }
        Estimate e = f.estimate();
        assertThat(e.valid()).isTrue();
        assertThat(Math.abs(e.estimate() - n)).isLessThanOrEqualTo(3 * e.standardError());
        double sum = f.stages().stream().mapToDouble(s -> s.estimate().estimate()).sum();
        assertThat(e.estimate()).isEqualTo(sum);
    }

    @Test
    void countingFilterEstimatesFromNonZeroCounters() {
        CountingBloomFilter f = CountingBloomFilter.create(100_000, 0.01);
        for (long i = 0; i < 100_000; i++) {
            f.add(i);
        }
        Estimate e = f.estimate();
        assertThat(Math.abs(e.estimate() - 100_000)).isLessThanOrEqualTo(3 * e.standardError());
    }

    @ParameterizedTest(name = "pageBits={0}, n={1}")
    @org.junit.jupiter.params.provider.CsvSource({
        "0, 100000",
        "512, 1000",
        "512, 100000",
        "2048, 1000",
        "2048, 100000"
    })
    void statedStandardErrorMatchesTheSpreadOfEstimates(int pageBits, int n) {
        // 300 filters of 2^20 bits, k = 7, each with n fresh random items (seeded). The sample
        // standard deviation of 300 estimates has a relative error of about 1/sqrt(600) = 4%,
        // so [0.8, 1.25] of the stated error is a 5-sigma band: an error model off by a factor,
        // like sqrt(n) for a sparse paged filter, fails it.
        int trials = 300;
        FilterSpec spec = FilterSpec.of(1 << 20, 7, pageBits, Hasher.defaultHasher());
        java.util.SplittableRandom r = new java.util.SplittableRandom(7 + pageBits + n);
        double sum = 0;
        double sumSq = 0;
        double stated = 0;
        for (int t = 0; t < trials; t++) {
            BloomFilter f = BloomFilter.create(spec);
            for (int i = 0; i < n; i++) {
                f.add(r.nextLong());
            }
            Estimate e = f.estimate();
            sum += e.estimate();
            sumSq += e.estimate() * e.estimate();
            stated += e.standardError();
        }
        double mean = sum / trials;
        double sd = Math.sqrt((sumSq - trials * mean * mean) / (trials - 1));
        stated /= trials;
        assertThat(Math.abs(mean - n))
                .as("bias")
                .isLessThanOrEqualTo(4 * stated / Math.sqrt(trials) + 0.5);
        assertThat(sd / stated)
                .as("measured sd %.3f vs stated se %.3f", sd, stated)
                .isBetween(0.8, 1.25);
    }
}
