package io.bloomstream.table;

import static io.bloomstream.testing.HostileFilters.BLOOM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import io.bloomstream.testing.Allocations;
import io.bloomstream.testing.HostileFilters;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link UnionAggFunction}, {@link EstimateScalarFunction} and {@link
 * MightContainScalarFunction} given filters shaped to hurt (issue 20, items 4 to 6): a 49-byte
 * filter declaring 2^31 pages, a 197 KB filter of pages far apart, and item counts near 2^63.
 *
 * <p>The timeouts are far above what the functions take (milliseconds) and far below what they took
 * before the fix (over 30 s a row walking the declared pages); they only keep a regression from
 * hanging the build.
 */
class HostileFilterArgumentsTest {

    private static final Duration GENEROUS = Duration.ofSeconds(20);

    @Test
    void unionOfFiltersDeclaringTheMostPagesCostsTheirPages() {
        byte[] bytes = HostileFilters.emptyWithMostPages();
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    for (int row = 0; row < 3; row++) {
                        u.accumulate(acc, bytes);
                    }
                    assertThat(acc.pages.entries()).isEmpty();
                    assertThat(u.getValue(acc)).isEqualTo(bytes);
                });
    }

    @Test
    void scalarsOnAFilterDeclaringTheMostPagesAnswerAtOnce() {
        byte[] bytes = HostileFilters.emptyWithMostPages();
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    assertThat(new EstimateScalarFunction().eval(bytes)).isZero();
                    assertThat(new MightContainScalarFunction().eval(bytes, "x")).isFalse();
                });
    }

    @Test
    void unionOfPagesFarApartAllocatesInProportionToThePages() throws Exception {
        byte[] bytes = HostileFilters.pagesFarApart(BLOOM);
        unionTwice(bytes); // once first, so that class loading is not counted
        Allocations.Measured m = Allocations.measure(() -> unionTwice(bytes));
        assertThat(m.thrown()).isNull();
        // The accumulator's map holds the 16,384 one-word pages (a hash map entry, a boxed key and
        // an array each), and the result is built and encoded once: under 1 KiB a page, where
        // each page cost a 1 MiB chunk before the fix (16 GiB).
        assertThat(m.bytes()).isLessThan(16_384L * 1024);
    }

    private static void unionTwice(byte[] bytes) throws Exception {
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        u.accumulate(acc, bytes);
        u.accumulate(acc, bytes);
        assertThat(acc.itemsAdded).isEqualTo(2 * 16_384);
        assertThat(u.getValue(acc)).hasSize(bytes.length);
    }

    private static byte[] filterWithItems(long itemsAdded) {
        FilterSpec spec = FilterSpec.forItems(1_000, 0.01);
        long[] page = new long[Pages.words(spec)];
        page[0] = 1;
        return FilterCodec.encode(
                BloomFilter.fromPages(spec, itemsAdded, List.of(Map.entry(0L, page))));
    }

    @Test
    void unionItemCountsSaturateInsteadOfWrapping() throws Exception {
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        u.accumulate(acc, filterWithItems(Long.MAX_VALUE - 10));
        u.accumulate(acc, filterWithItems(100));
        assertThat(acc.itemsAdded).isEqualTo(Long.MAX_VALUE);
        u.accumulate(acc, filterWithItems(Long.MAX_VALUE));
        assertThat(acc.itemsAdded).isEqualTo(Long.MAX_VALUE);
        assertThat(FilterCodec.decode(u.getValue(acc)).itemsAdded()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void mergedItemCountsSaturateInsteadOfWrapping() throws Exception {
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator a = u.createAccumulator();
        BloomAccumulator b = u.createAccumulator();
        u.accumulate(a, filterWithItems(Long.MAX_VALUE / 2 + 1));
        u.accumulate(b, filterWithItems(Long.MAX_VALUE / 2 + 1));
        u.merge(a, List.of(b));
        assertThat(a.itemsAdded).isEqualTo(Long.MAX_VALUE);
        assertThat(FilterCodec.decode(u.getValue(a)).itemsAdded()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aWrappedCountInOldStateReadsAsSaturated() throws Exception {
        // State written before counts saturated may hold a wrapped (negative) count: the group
        // reads it as saturated instead of failing on every replay.
        UnionAggFunction u = new UnionAggFunction();
        BloomAccumulator acc = u.createAccumulator();
        u.accumulate(acc, filterWithItems(5));
        acc.itemsAdded = Long.MIN_VALUE + 3;
        assertThat(FilterCodec.decode(u.getValue(acc)).itemsAdded()).isEqualTo(Long.MAX_VALUE);
        u.accumulate(acc, filterWithItems(5));
        assertThat(acc.itemsAdded).isEqualTo(Long.MAX_VALUE);
    }
}
