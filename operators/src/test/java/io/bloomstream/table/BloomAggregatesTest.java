package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.CountingBloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Pages;
import io.bloomstream.table.internal.SqlArguments;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link CountDistinctAggFunction}, {@link BuildFilterAggFunction} and {@link
 * UnionAggFunction} called directly, with heap-backed {@code MapView}s (as in a local aggregation
 * or a batch job).
 */
class BloomAggregatesTest {

    private static final int N = 5_000;

    private static BloomAccumulator count(CountDistinctAggFunction f, int from, int to)
            throws Exception {
        BloomAccumulator acc = f.createAccumulator();
        for (int i = from; i < to; i++) {
            f.accumulate(acc, "user-" + i, 10_000L, 0.01);
        }
        return acc;
    }

    private static long recount(BloomAccumulator acc) throws Exception {
        long bits = 0;
        for (Map.Entry<Long, long[]> e : acc.pages.entries()) {
            bits += Pages.bitCount(e.getValue());
        }
        return bits;
    }

    @Test
    void setBitCountFollowsThePages() throws Exception {
        BloomAccumulator acc = count(new CountDistinctAggFunction(), 0, N);
        assertThat(acc.setBits).isPositive().isEqualTo(recount(acc));
        assertThat(acc.setBits).isEqualTo(acc.toFilter().bitCount());
    }

    @Test
    void valueSeenAgainChangesNothing() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = count(f, 0, N);
        long bits = acc.setBits;
        Long before = f.getValue(acc);
        for (int i = 0; i < N; i += 7) {
            f.accumulate(acc, "user-" + i, 10_000L, 0.01);
        }
        assertThat(acc.setBits).isEqualTo(bits);
        assertThat(f.getValue(acc)).isEqualTo(before);
    }

    @Test
    void mergeOfPartsEqualsOneAccumulatorOfAll() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator all = count(f, 0, N);
        BloomAccumulator merged = f.createAccumulator();
        // overlapping parts, an empty accumulator, and a part merged twice
        BloomAccumulator a = count(f, 0, 3_000);
        BloomAccumulator b = count(f, 2_000, N);
        f.merge(merged, List.of(a, f.createAccumulator(), b, a));
        assertThat(merged.setBits).isEqualTo(all.setBits).isEqualTo(recount(merged));
        assertThat(merged.toFilter().estimate()).isEqualTo(all.toFilter().estimate());
        assertThat(f.getValue(merged)).isEqualTo(f.getValue(all));
        for (long page : all.pages.keys()) {
            assertThat(merged.pages.get(page)).isEqualTo(all.pages.get(page));
        }
    }

    @Test
    void countIsTheLibraryEstimate() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = count(f, 0, N);
        BloomFilter library = BloomFilter.create(SqlArguments.spec("test", 10_000, 0.01));
        for (int i = 0; i < N; i++) {
            library.add("user-" + i);
        }
        assertThat(f.getValue(acc)).isEqualTo(Math.round(library.estimate().estimate()));
        // 3 standard errors
        assertThat((double) Math.abs(f.getValue(acc) - N))
                .isLessThanOrEqualTo(3 * library.estimate().standardError());
    }

    @Test
    void nullValuesAreIgnoredAndAnEmptyGroupCountsZero() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = f.createAccumulator();
        assertThat(f.getValue(acc)).isZero();
        f.accumulate(acc, null, 10_000L, 0.01);
        f.accumulate(acc, null, 10_000L, 0.01);
        assertThat(f.getValue(acc)).isZero();
        assertThat(acc.pages.isEmpty()).isTrue();
        BloomAccumulator defaults = f.createAccumulator();
        f.accumulate(defaults, null);
        assertThat(f.getValue(defaults)).isZero();
    }

    @Test
    void integersOfAnyWidthAreOneValueAndDifferFromStrings() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = f.createAccumulator();
        f.accumulate(acc, 5L);
        f.accumulate(acc, 5L);
        assertThat(f.getValue(acc)).isEqualTo(1);
        f.accumulate(acc, "5");
        f.accumulate(acc, new byte[] {5});
        assertThat(f.getValue(acc)).isEqualTo(3);
    }

    @Test
    void saturatedFilterGivesNullNotAWrongCount() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = f.createAccumulator();
        for (int i = 0; i < 20_000; i++) {
            f.accumulate(acc, (long) i, 10L, 0.01);
        }
        assertThat(acc.estimate().saturated()).isTrue();
        assertThat(f.getValue(acc)).isNull();
    }

    @Test
    void rowOfAnotherShapeIsAnErrorNamingBoth() throws Exception {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = count(f, 0, 10);
        assertThatThrownBy(() -> f.accumulate(acc, "x", 20_000L, 0.01))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected_items=20000")
                .hasMessageContaining(SqlArguments.spec("t", 20_000, 0.01).toString())
                .hasMessageContaining(SqlArguments.spec("t", 10_000, 0.01).toString());
        BloomAccumulator other = f.createAccumulator();
        f.accumulate(other, "y", 20_000L, 0.01);
        assertThatThrownBy(() -> f.merge(acc, List.of(other)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("BLOOM_COUNT_DISTINCT")
                .hasMessageContaining("bits=" + SqlArguments.spec("t", 20_000, 0.01).bits());
    }

    @Test
    void argumentsOutOfRangeAreNamedAtRunTime() {
        CountDistinctAggFunction f = new CountDistinctAggFunction();
        BloomAccumulator acc = f.createAccumulator();
        assertThatThrownBy(() -> f.accumulate(acc, "x", 0L, 0.01))
                .hasMessageContaining("expected_items must be positive, was 0");
        assertThatThrownBy(() -> f.accumulate(acc, "x", 10L, 1.0))
                .hasMessageContaining("fpp must be in (0, 1), was 1.0");
        assertThatThrownBy(() -> f.accumulate(acc, "x", null, 0.01))
                .hasMessageContaining("expected_items must not be NULL");
    }

    @Test
    void buildEncodesTheLibraryFilter() throws Exception {
        BuildFilterAggFunction b = new BuildFilterAggFunction();
        BloomAccumulator acc = b.createAccumulator();
        FilterSpec spec = SqlArguments.spec("test", 1_000, 0.01);
        BloomFilter library = BloomFilter.create(spec);
        for (int i = 0; i < 800; i++) {
            b.accumulate(acc, "id-" + i, 1_000L, 0.01);
            library.add("id-" + i);
        }
        b.accumulate(acc, null, 1_000L, 0.01);
        assertThat(b.getValue(acc)).isEqualTo(FilterCodec.encode(library));
        assertThat(b.getValue(b.createAccumulator())).isNull();
    }

    @Test
    void unionOfPartsHasTheBitsOfTheWhole() throws Exception {
        BuildFilterAggFunction b = new BuildFilterAggFunction();
        BloomAccumulator even = b.createAccumulator();
        BloomAccumulator odd = b.createAccumulator();
        BloomAccumulator all = b.createAccumulator();
        for (int i = 0; i < 20_000; i++) {
            b.accumulate(i % 2 == 0 ? even : odd, (long) i, 20_000L, 0.01);
            b.accumulate(all, (long) i, 20_000L, 0.01);
        }
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator union = u.createAccumulator();
        u.accumulate(union, b.getValue(even));
        u.accumulate(union, null);
        BloomAccumulator other = u.createAccumulator();
        u.accumulate(other, b.getValue(odd));
        u.merge(union, List.of(other));
        BloomFilter got = (BloomFilter) FilterCodec.decode(u.getValue(union));
        BloomFilter whole = (BloomFilter) FilterCodec.decode(b.getValue(all));
        assertThat(got.spec()).isEqualTo(whole.spec());
        assertThat(got.bitCount()).isEqualTo(whole.bitCount()).isEqualTo(union.setBits);
        assertThat(got.estimate()).isEqualTo(whole.estimate());
        assertThat(got.itemsAdded()).isEqualTo(even.itemsAdded + odd.itemsAdded);
        for (int i = 0; i < 20_000; i++) {
            assertThat(got.mightContain((long) i)).isTrue();
        }
    }

    @Test
    void unionOfDifferentShapesNamesBoth() throws Exception {
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        BloomFilter small = BloomFilter.create(SqlArguments.spec("t", 1_000, 0.01));
        BloomFilter large = BloomFilter.create(SqlArguments.spec("t", 50_000, 0.01));
        u.accumulate(acc, FilterCodec.encode(small));
        assertThatThrownBy(() -> u.accumulate(acc, FilterCodec.encode(large)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("BLOOM_UNION")
                .hasMessageContaining(small.spec().toString())
                .hasMessageContaining(large.spec().toString());
    }

    @Test
    void unionRefusesCountingFiltersAndBadBytes() {
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        MembershipFilter counting = CountingBloomFilter.create(FilterSpec.forItems(100, 0.01));
        assertThatThrownBy(() -> u.accumulate(acc, FilterCodec.encode(counting)))
                .hasMessageContaining("must be a Bloom filter, was a CountingBloomFilter");
        byte[] bytes = FilterCodec.encode(BloomFilter.create(100, 0.01));
        bytes[bytes.length / 2] ^= 1;
        assertThatThrownBy(() -> u.accumulate(acc, bytes))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("argument 'filter' is not a valid filter")
                .hasMessageContaining("crc32c");
    }
}
