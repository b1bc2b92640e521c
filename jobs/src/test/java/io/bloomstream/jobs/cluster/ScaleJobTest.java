package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The scale benchmark's stream and its arithmetic, without a cluster. */
class ScaleJobTest {

    @Test
    void permuteIsABijectionOfTheRangeForSizesAroundPowersOfFour() {
        for (long n : new long[] {1, 2, 3, 4, 5, 15, 16, 17, 1000, 4095, 4096, 4097, 65_537}) {
            Set<Long> seen = new HashSet<>();
            for (long i = 0; i < n; i++) {
                long x = ScaleJob.permute(i, n, 44);
                assertThat(x).as("n=%d i=%d", n, i).isBetween(0L, n - 1);
                seen.add(x);
            }
            assertThat(seen).as("n=%d", n).hasSize((int) n);
        }
    }

    @Test
    void everyIdComesExactlyTwiceAndNotInOrder() {
        long distinct = 10_000;
        int[] times = new int[(int) distinct];
        long inPlace = 0;
        for (long i = 0; i < 2 * distinct; i++) {
            long j = ScaleJob.permute(i, 2 * distinct, 7) >>> 1;
            times[(int) j]++;
            if (j == i >>> 1) {
                inPlace++;
            }
        }
        for (int t : times) {
            assertThat(t).isEqualTo(2);
        }
        // a random order puts about 2 of 20,000 positions at their own id; at most 20 here
        assertThat(inPlace).isLessThan(20);
        assertThat(ScaleJob.permute(0, 2 * distinct, 7))
                .isNotEqualTo(ScaleJob.permute(0, 2 * distinct, 8));
    }

    @Test
    void uuidsReadBackToTheirIdAndNothingElseDoes() {
        for (long j : new long[] {0, 1, 2, 99_999_999, Long.MAX_VALUE}) {
            String id = ScaleJob.uuid(j);
            assertThat(id)
                    .hasSize(36)
                    .matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
            assertThat(ScaleJob.idOf(id)).isEqualTo(j);
        }
        assertThat(ScaleJob.uuid(1)).isNotEqualTo(ScaleJob.uuid(2));
        assertThat(ScaleJob.idOf("id-1")).isEqualTo(-1);
        assertThat(ScaleJob.idOf("")).isEqualTo(-1);
        // a UUID whose second half does not belong to its first
        String id = ScaleJob.uuid(5);
        assertThat(ScaleJob.idOf(id.substring(0, 35) + (id.endsWith("0") ? "1" : "0")))
                .isEqualTo(-1);
    }

    @Test
    void theDistinctIdsExpectedAfterSomeEventsMatchACountOfTheStream() {
        long n = ScaleBenchmark.DISTINCT; // 10^7 unless set
        assertThat(ScaleBenchmark.distinctAfter(0)).isZero();
        assertThat(ScaleBenchmark.distinctAfter(1)).isEqualTo(1);
        assertThat(ScaleBenchmark.distinctAfter(2 * n)).isEqualTo(n);
        // half the events: an id is missing when both its positions fall in the other half
        double missing = (double) n * (n - 1) / (2 * n * (2.0 * n - 1));
        assertThat(ScaleBenchmark.distinctAfter(n)).isEqualTo(Math.round(n * (1 - missing)));
        // against a count of the first tenth of the stream itself: within 5 standard deviations
        // (sd < sqrt(n) / 2, 1,581 at 10^7)
        long tenth = 2 * n / 10;
        java.util.BitSet seen = new java.util.BitSet((int) n);
        for (long i = 0; i < tenth; i++) {
            seen.set((int) (ScaleJob.permute(i, 2 * n, ScaleBenchmark.SEED) >>> 1));
        }
        assertThat((double) seen.cardinality())
                .isCloseTo(
                        ScaleBenchmark.distinctAfter(tenth),
                        org.assertj.core.data.Offset.offset(2.5 * Math.sqrt(n)));
    }

    @Test
    void permuteRefusesPositionsOutOfRange() {
        assertThatThrownBy(() -> ScaleJob.permute(10, 10, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("10 not in [0, 10)");
    }
}
