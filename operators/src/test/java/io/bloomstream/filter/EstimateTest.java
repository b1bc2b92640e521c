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

    @ParameterizedTest(name = "capacity={0}")
    @org.junit.jupiter.params.provider.ValueSource(longs = {1, 2, 4})
    void aFilterSizedForAFewItemsIsValidWhenEmptyAndAtCapacity(long capacity) {
        // A few dozen bits, fewer than 16 of them zero even when the filter is empty or sparse:
        // validity must be relative to the filter's size, not an absolute count of zero cells.
        FilterSpec spec = FilterSpec.forItems(capacity, 0.01);
        BloomFilter f = BloomFilter.create(spec);
        Estimate empty = f.estimate();
        assertThat(empty.valid()).as("empty %s", empty).isTrue();
        assertThat(empty.saturated()).isFalse();
        assertThat(empty.estimate()).isZero();
        for (long i = 0; i < capacity; i++) {
            f.add(i * 0x9E3779B97F4A7C15L);
        }
        Estimate e = f.estimate();
        assertThat(e.valid()).as("at capacity %s", e).isTrue();
        assertThat(e.saturated()).isFalse();
        assertThat((double) capacity).isBetween(e.lower(), e.upper());
    }

    @ParameterizedTest(name = "capacity={0}, fpp={1}")
    @org.junit.jupiter.params.provider.CsvSource({
        "1, 0.01",
        "1, 0.001",
        "2, 0.01",
        "4, 0.01",
        "4, 0.001",
        "10, 0.01"
    })
    void smallFiltersAtCapacityAreValidAndStateTheSpreadOfTheirEstimates(
            long capacity, double fpp) {
        // 4000 filters of 10 to 144 bits, each given `capacity` fresh random items (seeded). The
        // sample sd of 4000 estimates is within about 1/sqrt(8000) = 1.1% of the true sd (a bit
        // more for these discrete, skewed estimates), so [0.9, 1.1] of the stated error is a band
        // of more than 5 sigma. The mean may exceed n by the logarithm's second-order bias, se^2
        // c / 2 (under 1% of n here), plus 4 sigma of the mean: bound 2% of n + 4 se / sqrt(4000).
        // Three standard errors do not cover 99.7% of single estimates of one or two items: a few
        // set bits make a step function (the stated error is a standard deviation, and the
        // sum of many shards' estimates is close to normal).
        int trials = 4000;
        FilterSpec spec = FilterSpec.forItems(capacity, fpp);
        java.util.SplittableRandom r = new java.util.SplittableRandom(11 + capacity);
        double sum = 0;
        double sumSq = 0;
        double stated = 0;
        int valid = 0;
        for (int t = 0; t < trials; t++) {
            BloomFilter f = BloomFilter.create(spec);
            for (long i = 0; i < capacity; i++) {
                f.add(r.nextLong());
            }
            Estimate e = f.estimate();
            sum += e.estimate();
            sumSq += e.estimate() * e.estimate();
            stated += e.standardError();
            valid += e.valid() ? 1 : 0;
        }
        double mean = sum / trials;
        double sd = Math.sqrt((sumSq - trials * mean * mean) / (trials - 1));
        stated /= trials;
        assertThat(valid).as("valid at capacity (%s)", spec).isEqualTo(trials);
        assertThat(Math.abs(mean - capacity))
                .as("bias")
                .isLessThanOrEqualTo(0.02 * capacity + 4 * stated / Math.sqrt(trials));
        assertThat(sd / stated)
                .as("measured sd %.3f vs stated se %.3f (%s)", sd, stated, spec)
                .isBetween(0.9, 1.1);
    }

    @Test
    void saturatedMeansNoZeroCellOrTooFewForABoundedInterval() {
        long m = 1 << 20;
        // m0 = 0: saturated; the value is finite (half a zero cell), never infinity.
        Estimate full = Estimate.of(m, m, 7, m);
        assertThat(full.saturated()).isTrue();
        assertThat(full.valid()).isFalse();
        assertThat(full.estimate()).isFinite();
        // Nearly full, sd(m0) is a little under sqrt(m0): saturated while m0 <= 3 sd(m0), that is
        // m0 <= 8 ...
        assertThat(Estimate.of(m - 8, m, 7, m).saturated()).isTrue();
        assertThat(Estimate.of(m - 9, m, 7, m).saturated()).isFalse();
        // ... then bounded but invalid while sd(m0) / m0 > 1/4 (m0 < 16) ...
        Estimate sparseZeros = Estimate.of(m - 12, m, 7, m);
        assertThat(sparseZeros.saturated()).isFalse();
        assertThat(sparseZeros.valid()).isFalse();
        assertThat(sparseZeros.estimate()).isFinite().isPositive();
        // ... and valid from m0 = 16 on.
        assertThat(Estimate.of(m - 16, m, 7, m).valid()).isTrue();
        // A tiny filter with no zero cell is saturated too.
        assertThat(Estimate.of(15, 15, 9, 15).saturated()).isTrue();
    }

    @Test
    void aSumIsSaturatedWhenAPartIsAndValidWhenAllAre() {
        Estimate ok = Estimate.of(7, 15, 9, 15);
        Estimate full = Estimate.of(15, 15, 9, 15);
        assertThat(Estimate.sum(java.util.List.of(ok, ok)).valid()).isTrue();
        Estimate sum = Estimate.sum(java.util.List.of(ok, full));
        assertThat(sum.valid()).isFalse();
        assertThat(sum.saturated()).isTrue();
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
