package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** No filter kind ever forgets an item it holds. */
class NoFalseNegativesTest {

    @Test
    void bloomFiltersOfEveryLayoutKeepEveryItemEvenPastCapacity() {
        for (int page : new int[] {FilterSpec.CLASSIC, 64, 512, 8192}) {
            BloomFilter f =
                    BloomFilter.create(
                            FilterSpec.builder()
                                    .expectedItems(1000)
                                    .fpp(0.01)
                                    .pageBits(page)
                                    .build());
            for (int i = 0; i < 5000; i++) {
                f.add("item-" + i);
            }
            for (int i = 0; i < 5000; i++) {
                assertThat(f.mightContain("item-" + i)).as("page %d item %d", page, i).isTrue();
            }
        }
    }

    @Test
    void addIfAbsentReportsNewItemsAndNeverForgets() {
        BloomFilter f = BloomFilter.create(10_000, 0.01);
        int reportedNew = 0;
        for (int i = 0; i < 10_000; i++) {
            if (f.addIfAbsent(i)) {
                reportedNew++;
            }
            assertThat(f.addIfAbsent(i)).isFalse();
        }
        for (int i = 0; i < 10_000; i++) {
            assertThat(f.mightContain(i)).isTrue();
        }
        // A genuinely new item is misreported as seen only with the filter's rate (below 1%
        // at each step since the filter is never past capacity): 4.5 sigma bound on 1% of 10^4.
        assertThat(10_000 - reportedNew).isLessThanOrEqualTo(145);
        assertThat(f.itemsAdded()).isEqualTo(reportedNew);
    }

    @Test
    void countingRemovalsNeverHideOtherItems() {
        // A small filter so that counters are shared and some saturate.
        CountingBloomFilter f =
                CountingBloomFilter.create(
                        FilterSpec.builder().bits(4096).hashes(4).pageBits(512).build());
        SplittableRandom random = new SplittableRandom(3);
        int n = 2000;
        int[] copies = new int[n];
        for (int round = 0; round < 20_000; round++) {
            int item = random.nextInt(n);
            if (copies[item] > 0 && random.nextBoolean()) {
                assertThat(f.remove(item)).isTrue();
                copies[item]--;
            } else {
                f.add(item);
                copies[item]++;
            }
            if (round % 1000 == 0) {
                for (int i = 0; i < n; i++) {
                    if (copies[i] > 0) {
                        assertThat(f.mightContain(i)).as("item %d at round %d", i, round).isTrue();
                    }
                }
            }
        }
        assertThat(f.saturatedCounters()).isPositive();
        for (int i = 0; i < n; i++) {
            if (copies[i] > 0) {
                assertThat(f.mightContain(i)).isTrue();
            }
        }
    }

    @Test
    void scalableCascadeKeepsItemsOfEveryStage() {
        ScalableBloomFilter f = ScalableBloomFilter.create(100, 0.01);
        for (int i = 0; i < 20_000; i++) {
            f.add(i);
        }
        assertThat(f.stages().size()).isGreaterThan(5);
        for (int i = 0; i < 20_000; i++) {
            assertThat(f.mightContain(i)).isTrue();
        }
    }
}
