package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Filters of more than 2^31 bits (64-bit index arithmetic everywhere). */
class LargeFilterTest {

    @Test
    void classicFilterBeyondTwoToTheThirtyOneBitsUsesTheHighBits() {
        long bits = 3L << 30; // 384 MiB, a third of it past bit 2^31
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder()
                                .bits(bits)
                                .hashes(7)
                                .pageBits(FilterSpec.CLASSIC)
                                .build());
        for (long i = 0; i < 10_000; i++) {
            f.add(i);
        }
        for (long i = 0; i < 10_000; i++) {
            assertThat(f.mightContain(i)).isTrue();
        }
        // About a third of the set bits lie past bit 2^31.
        PagedWords words = f.words();
        long upper = 0;
        for (long w = (1L << 31) >>> 6; w < words.words(); w++) {
            upper += Long.bitCount(words.get(w));
        }
        assertThat(upper).isBetween(20_000L, 27_000L);
        assertThat(f.bitCount()).isBetween(69_000L, 70_000L);
    }

    @Test
    void pagedFilterBeyondTwoToTheThirtyOneBitsAllocatesOnlyTouchedChunks() {
        long bits = 1L << 33; // 1 GiB if fully allocated
        BloomFilter f = BloomFilter.create(FilterSpec.builder().bits(bits).hashes(7).build());
        for (long i = 0; i < 10; i++) {
            f.add(i);
        }
        assertThat(f.spec().pages()).isEqualTo(bits / 512);
        // At most one 1 MiB chunk per item, 10 MiB of the 1 GiB, and the table of chunks (8 KiB).
        assertThat(f.allocatedBytes()).isLessThanOrEqualTo((10L << 20) + 8 * 1024);
        assertThat(f.nonEmptyPages()).isEqualTo(10);
        for (long i = 0; i < 10; i++) {
            assertThat(f.mightContain(i)).isTrue();
        }
    }
}
