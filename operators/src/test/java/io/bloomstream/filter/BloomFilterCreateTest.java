package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link BloomFilter#create(long, double)}: the blocked layout (512-bit pages, XXH3-64)
 * with its storage allocated at once, probed by the fast path, which must set and test exactly the
 * bits of the general path and of {@link BlockedBloomFilter}.
 */
class BloomFilterCreateTest {

    private static final int N = 20_000;

    @Test
    void createUsesTheBlockedLayoutAllocatedAtOnce() {
        BloomFilter f = BloomFilter.create(N, 0.01);
        assertThat(f.spec()).isEqualTo(BlockedBloomFilter.specFor(N, 0.01));
        assertThat(f.hasher().strategy()).isEqualTo(HashStrategy.XXH3_64);
        assertThat(f.allocatedBytes()).isGreaterThanOrEqualTo(f.spec().bits() / 8);
    }

    @Test
    void fastPathSetsTheBitsOfTheGeneralPathAndOfBlockedBloomFilter() {
        FilterSpec spec = BlockedBloomFilter.specFor(N, 0.01);
        BloomFilter fast = BloomFilter.create(N, 0.01);
        BloomFilter general = BloomFilter.create(spec); // lazy storage: the general path
        BlockedBloomFilter blocked = BlockedBloomFilter.create(spec);
        SplittableRandom random = new SplittableRandom(21);
        for (int i = 0; i < N; i++) {
            long item = random.nextLong();
            String s = "id-" + item;
            assertThat(fast.addIfAbsent(item)).isEqualTo(general.addIfAbsent(item));
            blocked.add(item);
            if (i % 2 == 0) {
                fast.add(s);
                general.add(s);
                blocked.add(s);
            }
        }
        byte[] bytes = new byte[] {1, 2, 3};
        fast.add(bytes);
        general.add(bytes);
        blocked.add(bytes);
        assertThat(fast.itemsAdded()).isEqualTo(general.itemsAdded());
        BloomFilter fromBlocked = blocked.toBloomFilter();
        for (long w = 0; w < spec.words(1); w++) {
            assertThat(fast.words().get(w)).as("word %d", w).isEqualTo(general.words().get(w));
            assertThat(fast.words().get(w)).as("word %d", w).isEqualTo(fromBlocked.words().get(w));
        }
        // the same answers for items never added, through every entry point
        for (int i = 0; i < 5_000; i++) {
            long item = random.nextLong();
            String s = "absent-" + i;
            assertThat(fast.mightContain(item)).isEqualTo(general.mightContain(item));
            assertThat(fast.mightContain(s)).isEqualTo(general.mightContain(s));
            assertThat(fast.mightContain(fast.hasher().hash(s))).isEqualTo(general.mightContain(s));
        }
        assertThat(fast.mightContain(bytes)).isTrue();
    }

    @Test
    void addedItemsAreFoundAndRepeatsAreNotNew() {
        BloomFilter f = BloomFilter.create(N, 0.01);
        for (int i = 0; i < N; i++) {
            assertThat(f.mightContain("item-" + i) || f.addIfAbsent("item-" + i)).isTrue();
        }
        for (int i = 0; i < N; i++) {
            assertThat(f.mightContain("item-" + i)).isTrue();
            assertThat(f.addIfAbsent("item-" + i)).isFalse();
        }
    }

    /**
     * The rate at the expected items is within {@link Binomial#Z} sigma of the layout's model and
     * at most the target: fixed seeds, so a failure is a bug.
     */
    @Test
    void falsePositiveRateAtCapacityMeetsTheTarget() {
        BloomFilter f = BloomFilter.create(N, 0.01);
        for (int i = 0; i < N; i++) {
            f.add((long) i);
        }
        int probes = 200_000;
        long fp = 0;
        for (long i = N; i < N + probes; i++) {
            fp += f.mightContain(i) ? 1 : 0;
        }
        double model = f.spec().expectedFpp(N);
        assertThat(Binomial.within(fp, probes, model))
                .as("%d of %d, model %s", fp, probes, model)
                .isTrue();
        assertThat(Binomial.atMost(fp, probes, 0.01)).isTrue();
    }

    @Test
    void copiesAndUnionsKeepTheFastPathAndTheirBits() {
        BloomFilter a = BloomFilter.create(N, 0.01);
        BloomFilter b = BloomFilter.create(N, 0.01);
        a.add("a");
        b.add("b");
        BloomFilter union = a.union(b);
        BloomFilter copy = a.copy();
        assertThat(union.mightContain("a")).isTrue();
        assertThat(union.mightContain("b")).isTrue();
        assertThat(copy.mightContain("a")).isTrue();
        long bitsOfA = a.bitCount();
        copy.add("c");
        assertThat(copy.mightContain("c")).isTrue();
        assertThat(a.bitCount()).as("the copy is independent").isEqualTo(bitsOfA);
        assertThat(union.bitCount()).isEqualTo(a.bitCount() + b.bitCount() - overlap(a, b));
    }

    private static long overlap(BloomFilter a, BloomFilter b) {
        long n = 0;
        for (long w = 0; w < a.spec().words(1); w++) {
            n += Long.bitCount(a.words().get(w) & b.words().get(w));
        }
        return n;
    }

    @Test
    void filesOfTheNewDefaultRoundTripIntoTheFastPath() throws Exception {
        BloomFilter f = BloomFilter.create(1000, 0.01);
        GoldenFilters.fill(f, 1000);
        BloomFilter decoded = (BloomFilter) FilterCodec.decode(FilterCodec.encode(f));
        assertThat(decoded.spec()).isEqualTo(f.spec());
        for (int i = 0; i < 1000; i++) {
            assertThat(decoded.mightContain(GoldenFilters.item(i))).isTrue();
        }
    }
}
