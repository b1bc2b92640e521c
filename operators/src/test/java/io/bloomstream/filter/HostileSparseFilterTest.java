package io.bloomstream.filter;

import static io.bloomstream.testing.HostileFilters.BLOOM;
import static io.bloomstream.testing.HostileFilters.COUNTING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.bloomstream.testing.Allocations;
import io.bloomstream.testing.HostileFilters;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sparse filters whose few pages lie far apart in a huge declared filter (issue 20, items 4 and 5):
 * decoding one allocates in proportion to its input, and every operation on it costs in proportion
 * to its non-empty pages, never to the pages it declares.
 *
 * <p>The bounds are loose on purpose: the fixed code allocates about 4 bytes per input byte and
 * answers in milliseconds, the code before the fix allocated a 1 MiB chunk per page (16 GiB for the
 * 197 KB file) and walked all 2^31 declared pages (tens of seconds an operation). The timeouts only
 * keep a regression from hanging the build.
 */
class HostileSparseFilterTest {

    /** Bytes of heap a decoded filter may cost per byte of input... */
    private static final long BYTES_PER_INPUT_BYTE = 16;

    /**
     * ...plus a fixed allowance for the decoder's objects (header, spec, streams) and the XXH3
     * hasher it derives from the seed: a few KiB. (The chunk table alone of the 49-byte file cost
     * 64 KiB before the fix.)
     */
    private static final long FIXED_BYTES = 16 * 1024;

    private static long budget(byte[] input) {
        return BYTES_PER_INPUT_BYTE * input.length + FIXED_BYTES;
    }

    private static final Duration GENEROUS = Duration.ofSeconds(20);

    /**
     * Decodes {@code bytes}, checking what the second decode allocates (the first loads classes).
     */
    private static MembershipFilter decodeWithinBudget(byte[] bytes) {
        MembershipFilter f;
        try {
            f = FilterCodec.decode(bytes);
        } catch (FilterFormatException e) {
            throw new AssertionError(e);
        }
        Allocations.Measured m = Allocations.measure(() -> FilterCodec.decode(bytes));
        assertThat(m.thrown()).isNull();
        assertThat(m.bytes())
                .as("bytes allocated to decode %d input bytes", bytes.length)
                .isLessThanOrEqualTo(budget(bytes));
        return f;
    }

    @ParameterizedTest(name = "type {0}")
    @ValueSource(ints = {BLOOM, COUNTING})
    void pagesFarApartAllocateInProportionToTheInput(int type) throws Exception {
        byte[] bytes = HostileFilters.pagesFarApart(type);
        assertThat(bytes.length).isLessThan(600_000);
        MembershipFilter f = decodeWithinBudget(bytes);
        long allocated =
                f instanceof BloomFilter b
                        ? b.allocatedBytes()
                        : ((CountingBloomFilter) f).allocatedBytes();
        assertThat(allocated).isLessThanOrEqualTo(budget(bytes));
        // As the screen reads a file: streaming, the checksum checked at the end.
        Allocations.Measured streamed =
                Allocations.measure(
                        () ->
                                FilterCodec.readFileStreaming(
                                        new ByteArrayInputStream(bytes), bytes.length, null));
        assertThat(streamed.thrown()).isNull();
        assertThat(streamed.bytes()).isLessThanOrEqualTo(budget(bytes));
        // Every page is there, and nothing else.
        assertThat(FilterCodec.encode(f)).isEqualTo(bytes);
    }

    @Test
    void everyOperationOnPagesFarApartCostsThePages() {
        byte[] bytes = HostileFilters.pagesFarApart(BLOOM);
        BloomFilter f = (BloomFilter) decodeWithinBudget(bytes);
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    assertThat(f.nonEmptyPages()).isEqualTo(16_384);
                    assertThat(f.bitCount()).isEqualTo(16_384);
                    assertThat(f.estimate().setCells()).isEqualTo(16_384);
                    long pages = 0;
                    long[] page = new long[1];
                    for (long p = f.nextNonEmptyPage(0); p >= 0; p = f.nextNonEmptyPage(p + 1)) {
                        assertThat(f.readPage(p, page)).isTrue();
                        assertThat(page[0]).isEqualTo(HostileFilters.word(p));
                        pages++;
                    }
                    assertThat(pages).isEqualTo(16_384);
                    Allocations.Measured union = Allocations.measure(() -> f.union(f.copy()));
                    assertThat(union.thrown()).isNull();
                    assertThat(union.bytes()).isLessThan(budget(bytes));
                    BloomFilter twice = f.union(f.copy());
                    assertThat(twice.bitCount()).isEqualTo(16_384);
                    assertThat(twice.nonEmptyPages()).isEqualTo(16_384);
                    assertThat(twice.itemsAdded()).isEqualTo(2 * 16_384);
                });
    }

    @Test
    void pagesFromStateFarApartCostThePages() {
        // BLOOM_UNION and BLOOM_BUILD turn their accumulator's pages into a filter this way.
        BloomFilter shape = (BloomFilter) decodeWithinBudget(HostileFilters.pagesFarApart(BLOOM));
        List<Map.Entry<Long, long[]>> pages = new ArrayList<>();
        for (long p = shape.nextNonEmptyPage(0); p >= 0; p = shape.nextNonEmptyPage(p + 1)) {
            pages.add(Map.entry(p, new long[] {HostileFilters.word(p)}));
        }
        Allocations.Measured m =
                Allocations.measure(() -> BloomFilter.fromPages(shape.spec(), 3, pages));
        assertThat(m.thrown()).isNull();
        // 16,384 pages of 8 bytes: a few hundred bytes each at most, not a 1 MiB chunk each.
        assertThat(m.bytes()).isLessThan(16_384L * 256);
        BloomFilter f = BloomFilter.fromPages(shape.spec(), 3, pages);
        assertThat(f.nonEmptyPages()).isEqualTo(16_384);
        assertThat(f.bitCount()).isEqualTo(shape.bitCount());
    }

    @Test
    void theMostPagesWithAnEmptySparseBodyCostNothingToUse() {
        byte[] bytes = HostileFilters.emptyWithMostPages();
        assertThat(bytes).hasSize(49);
        BloomFilter f = (BloomFilter) decodeWithinBudget(bytes);
        assertThat(f.spec().pages()).isEqualTo(Integer.MAX_VALUE);
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    assertThat(f.nonEmptyPages()).isZero();
                    assertThat(f.nextNonEmptyPage(0)).isEqualTo(-1);
                    assertThat(f.bitCount()).isZero();
                    assertThat(f.estimate().estimate()).isZero();
                    assertThat(f.mightContain("anything")).isFalse();
                    assertThat(FilterCodec.encode(f.union(f.copy()))).isEqualTo(bytes);
                    assertThat(f.allocatedBytes()).isZero();
                });
    }

    @Test
    void aCountingFilterOfTheMostPagesWithAnEmptySparseBodyCostsNothingToUse() {
        byte[] bytes = HostileFilters.sparse(COUNTING, 64L * Integer.MAX_VALUE, 64, new long[0], 0);
        CountingBloomFilter f = (CountingBloomFilter) decodeWithinBudget(bytes);
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    assertThat(f.nonZeroCounters()).isZero();
                    assertThat(f.saturatedCounters()).isZero();
                    assertThat(f.estimate().estimate()).isZero();
                    assertThat(f.toBloomFilter().nonEmptyPages()).isZero();
                    assertThat(FilterCodec.encode(f)).isEqualTo(bytes);
                });
    }

    @Test
    void aCountingFilterOfPagesFarApartBecomesABloomFilterOfThosePages() {
        byte[] bytes = HostileFilters.pagesFarApart(COUNTING);
        CountingBloomFilter f = (CountingBloomFilter) decodeWithinBudget(bytes);
        assertTimeoutPreemptively(
                GENEROUS,
                () -> {
                    // Four words a page, one counter set in each.
                    assertThat(f.nonZeroCounters()).isEqualTo(4 * 16_384);
                    Allocations.Measured m = Allocations.measure(f::toBloomFilter);
                    assertThat(m.thrown()).isNull();
                    assertThat(m.bytes()).isLessThan(budget(bytes));
                    BloomFilter b = f.toBloomFilter();
                    assertThat(b.nonEmptyPages()).isEqualTo(16_384);
                    assertThat(b.bitCount()).isEqualTo(4 * 16_384);
                });
    }

    @Test
    void addsIntoADecodedSparseFilterKeepEveryBit() throws Exception {
        // Blocks written in place, chunks allocated by adds absorbing the blocks they cover.
        BloomFilter f = (BloomFilter) decodeWithinBudget(HostileFilters.pagesFarApart(BLOOM));
        long before = f.bitCount();
        for (int i = 0; i < 200; i++) {
            f.add("item-" + i);
        }
        for (int i = 0; i < 200; i++) {
            assertThat(f.mightContain("item-" + i)).isTrue();
        }
        long[] page = new long[1];
        for (long p = 0; p < Integer.MAX_VALUE; p += 1L << 17) {
            f.readPage(p, page);
            assertThat(page[0] & HostileFilters.word(p)).isNotZero();
        }
        assertThat(f.bitCount()).isGreaterThan(before);
        BloomFilter again = (BloomFilter) FilterCodec.decode(FilterCodec.encode(f));
        assertThat(again.bitCount()).isEqualTo(f.bitCount());
    }

    @ParameterizedTest(name = "{0} items")
    @ValueSource(ints = {5_000, 20_000, 300_000})
    void aFilterOfOurOwnCostsNoMoreDecodedThanItDidBuilt(int items) throws Exception {
        // 37,500 pages of 512 bits over three chunks: 5,000 items touch about 60% of them
        // (written sparse, held as blocks or chunks), 20,000 almost all (sparse, then chunks),
        // 300,000 all (dense).
        BloomFilter built = BloomFilter.create(FilterSpec.forItems(2_000_000, 0.01));
        for (int i = 0; i < items; i++) {
            built.add("item-" + i);
        }
        byte[] bytes = FilterCodec.encode(built);
        BloomFilter decoded = (BloomFilter) FilterCodec.decode(bytes);
        assertThat(decoded.allocatedBytes()).isLessThanOrEqualTo(built.allocatedBytes() + 4096);
        assertThat(decoded.bitCount()).isEqualTo(built.bitCount());
        assertThat(FilterCodec.encode(decoded)).isEqualTo(bytes);
        for (int i = 0; i < items; i += 7) {
            assertThat(decoded.mightContain("item-" + i)).isTrue();
        }
    }
}
