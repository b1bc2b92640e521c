package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Tests for {@link BlockedBloomFilter}. */
class BlockedBloomFilterTest {

    static Stream<Function<FilterSpec, BlockedBloomFilter>> storages() {
        return Stream.of(BlockedBloomFilter::create, BlockedBloomFilter::createAligned);
    }

    private static FilterSpec spec(long bits, int hashes) {
        return FilterSpec.builder()
                .bits(bits)
                .hashes(hashes)
                .pageBits(512)
                .hasher(Hasher.xxh3_64(77))
                .build();
    }

    @ParameterizedTest
    @MethodSource("storages")
    void setsTheSameBitsAsBloomFilterOfTheSameSpec(Function<FilterSpec, BlockedBloomFilter> make) {
        // k = 3, 7 (one re-mix), 8 and 12 (two re-mixes).
        for (int k : new int[] {3, 7, 8, 12}) {
            FilterSpec spec = spec(512L * 97, k);
            BlockedBloomFilter fast = make.apply(spec);
            BloomFilter reference = BloomFilter.create(spec);
            for (long i = 0; i < 3000; i++) {
                assertThat(fast.addIfAbsent(i)).isEqualTo(reference.addIfAbsent(i));
                fast.add("s" + i);
                reference.add("s" + i);
            }
            BloomFilter converted = fast.toBloomFilter();
            assertThat(converted.spec()).isEqualTo(spec);
            assertThat(converted.itemsAdded()).isEqualTo(reference.itemsAdded());
            for (long w = 0; w < spec.words(1); w++) {
                assertThat(converted.words().get(w))
                        .as("k=%d word %d", k, w)
                        .isEqualTo(reference.words().get(w));
            }
            for (long i = 0; i < 20_000; i++) {
                assertThat(fast.mightContain(i)).isEqualTo(reference.mightContain(i));
            }
            assertThat(fast.bitCount()).isEqualTo(reference.bitCount());
        }
    }

    @Test
    void alignedStorageStartsEveryPageOnACacheLine() {
        assertThat(BlockedBloomFilter.createAligned(spec(512 * 1000, 7)).isAligned()).isTrue();
        assertThat(BlockedBloomFilter.create(spec(512 * 1000, 7)).isAligned()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("storages")
    void batchesAnswerAsOneByOne(Function<FilterSpec, BlockedBloomFilter> make) {
        FilterSpec spec = spec(512L * 300, 7);
        BlockedBloomFilter batched = make.apply(spec);
        BlockedBloomFilter single = make.apply(spec);
        SplittableRandom random = new SplittableRandom(3);
        long[] hashes = new long[1000];
        for (int i = 0; i < hashes.length; i++) {
            // Repeats inside a batch: the second occurrence is not new.
            hashes[i] = i % 10 == 9 ? hashes[i - 5] : random.nextLong();
        }
        boolean[] results = new boolean[hashes.length + 3];
        int added = batched.addIfAbsentHashes(hashes, 0, 900, results, 3);
        int expectedAdded = 0;
        for (int i = 0; i < 900; i++) {
            boolean isNew = single.addIfAbsentHash(hashes[i]);
            assertThat(results[3 + i]).as("item %d", i).isEqualTo(isNew);
            expectedAdded += isNew ? 1 : 0;
        }
        assertThat(added).isEqualTo(expectedAdded).isLessThan(900);
        batched.addHashes(hashes, 900, 100);
        for (int i = 900; i < 1000; i++) {
            single.addHash(hashes[i]);
        }
        assertThat(batched.itemsAdded()).isEqualTo(single.itemsAdded());
        long[] probes = new long[5000];
        for (int i = 0; i < probes.length; i++) {
            probes[i] = i < 1000 ? hashes[i] : random.nextLong();
        }
        boolean[] answers = new boolean[probes.length];
        int positives = batched.mightContainHashes(probes, 0, probes.length, answers, 0);
        int expectedPositives = 0;
        for (int i = 0; i < probes.length; i++) {
            assertThat(answers[i]).isEqualTo(single.mightContainHash(probes[i]));
            expectedPositives += answers[i] ? 1 : 0;
            if (i < 1000) {
                assertThat(answers[i]).as("no false negative at %d", i).isTrue();
            }
        }
        assertThat(positives).isEqualTo(expectedPositives);
    }

    @Test
    void roundTripsThroughTheCodecWithTheNewStrategyId() throws Exception {
        BlockedBloomFilter fast = BlockedBloomFilter.create(10_000, 0.01);
        for (long i = 0; i < 10_000; i++) {
            fast.add(i);
        }
        byte[] bytes = FilterCodec.encode(fast.toBloomFilter());
        assertThat(bytes[6]).isEqualTo((byte) HashStrategy.XXH3_64.id());
        MembershipFilter decoded = FilterCodec.decode(bytes);
        assertThat(decoded.hasher()).isEqualTo(fast.hasher());
        for (long i = 0; i < 10_000; i++) {
            assertThat(decoded.mightContain(i)).isTrue();
        }
        for (long i = 10_000; i < 20_000; i++) {
            assertThat(decoded.mightContain(i)).isEqualTo(fast.mightContain(i));
        }
    }

    @Test
    void rejectsSpecsOfAnotherLayout() {
        FilterSpec wrongPage =
                FilterSpec.builder()
                        .bits(4096)
                        .hashes(3)
                        .pageBits(1024)
                        .hasher(Hasher.xxh3_64(1))
                        .build();
        assertThatThrownBy(() -> BlockedBloomFilter.create(wrongPage))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("spec.pageBits must be 512, was 1024");
        FilterSpec wrongHasher = FilterSpec.of(4096, 3, 512, Hasher.xxh3(1));
        assertThatThrownBy(() -> BlockedBloomFilter.createAligned(wrongHasher))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("spec.hasher must give 64-bit hashes");
    }
}
