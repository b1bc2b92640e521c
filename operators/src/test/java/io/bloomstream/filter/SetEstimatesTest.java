package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link SetEstimates}. */
class SetEstimatesTest {

    private static final int SIZE = 100_000;

    @ParameterizedTest(name = "overlap={0}%")
    @ValueSource(ints = {0, 10, 50, 100})
    void unionAndIntersectionMatchExactAnswers(int overlapPercent) {
        // A = [0, SIZE), B = [SIZE - overlap, 2 SIZE - overlap): |A ∩ B| = overlap.
        int overlap = SIZE * overlapPercent / 100;
        FilterSpec spec = FilterSpec.forItems(2L * SIZE, 0.01);
        BloomFilter a = BloomFilter.create(spec);
        BloomFilter b = BloomFilter.create(spec);
        for (long i = 0; i < SIZE; i++) {
            a.add(i);
            b.add(SIZE - overlap + i);
        }
        Estimate union = SetEstimates.union(a, b);
        Estimate intersection = SetEstimates.intersection(a, b);
        long exactUnion = 2L * SIZE - overlap;
        // Eight comparisons over the four overlaps: a 4-sigma bound keeps the family-wise false
        // alarm near 0.05% (the union's error is the exact linear-counting error, checked
        // against the spread of estimates in EstimateTest; the intersection's adds three).
        assertThat(Math.abs(union.estimate() - exactUnion))
                .isLessThanOrEqualTo(4 * union.standardError());
        assertThat(Math.abs(intersection.estimate() - overlap))
                .as(
                        "intersection %.0f of %d, se %.0f",
                        intersection.estimate(), overlap, intersection.standardError())
                .isLessThanOrEqualTo(4 * intersection.standardError());
        assertThat(intersection.valid()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"bits", "hashes", "hasher"})
    void incompatibleFiltersAreRejectedNamingTheField(String field) {
        BloomFilter a = BloomFilter.create(FilterSpec.builder().bits(4096).hashes(5).build());
        FilterSpec.Builder other = FilterSpec.builder().bits(4096).hashes(5);
        switch (field) {
            case "bits":
                other.bits(8192);
                break;
            case "hashes":
                other.hashes(6);
                break;
            default:
                other.hasher(Hasher.xxh3(1));
        }
        BloomFilter b = BloomFilter.create(other.build());
        assertThatThrownBy(() -> SetEstimates.union(a, b))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(field + " differs");
    }
}
