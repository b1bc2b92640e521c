package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tests for {@link CountingBloomFilter}. */
class CountingBloomFilterTest {

    @Test
    void removeMakesAnItemAbsentAgain() {
        CountingBloomFilter f = CountingBloomFilter.create(1000, 0.001);
        f.add("a");
        assertThat(f.mightContain("a")).isTrue();
        assertThat(f.remove("a")).isTrue();
        assertThat(f.mightContain("a")).isFalse();
        assertThat(f.nonZeroCounters()).isZero();
    }

    @Test
    void removingAnAbsentItemChangesNothing() {
        CountingBloomFilter f = CountingBloomFilter.create(1000, 0.001);
        f.add("a");
        long before = f.nonZeroCounters();
        assertThat(f.remove("b")).isFalse();
        assertThat(f.nonZeroCounters()).isEqualTo(before);
        assertThat(f.mightContain("a")).isTrue();
    }

    @Test
    void saturatedCountersAreNeverDecremented() {
        CountingBloomFilter f = CountingBloomFilter.create(1000, 0.01);
        for (int i = 0; i < 20; i++) {
            f.add("hot");
        }
        assertThat(f.saturatedCounters()).isEqualTo(f.nonZeroCounters());
        for (int i = 0; i < 20; i++) {
            f.remove("hot");
        }
        // 20 adds saturated every counter at 15; the removals cannot know the true count, so
        // the item stays: a false positive, never a false negative.
        assertThat(f.mightContain("hot")).isTrue();
    }

    @Test
    void addIfAbsentCountsOnce() {
        CountingBloomFilter f = CountingBloomFilter.create(1000, 0.01);
        assertThat(f.addIfAbsent("x")).isTrue();
        assertThat(f.addIfAbsent("x")).isFalse();
        assertThat(f.remove("x")).isTrue();
        assertThat(f.mightContain("x")).isFalse();
    }

    @Test
    void convertsToAPlainFilterWithTheSameAnswers() {
        CountingBloomFilter f = CountingBloomFilter.create(5000, 0.01);
        for (int i = 0; i < 5000; i++) {
            f.add(i);
        }
        BloomFilter plain = f.toBloomFilter();
        for (int i = 0; i < 20_000; i++) {
            assertThat(plain.mightContain(i)).isEqualTo(f.mightContain(i));
        }
        assertThat(plain.bitCount()).isEqualTo(f.nonZeroCounters());
    }
}
