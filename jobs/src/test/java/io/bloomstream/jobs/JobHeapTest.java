package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Sizing;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/** Tests for {@link JobHeap}: the heap a command gets from its flags. */
class JobHeapTest {

    private static final ToLongFunction<String> NO_FILES = f -> -1;

    private static long mib(String... args) {
        return JobHeap.mib(args, NO_FILES, () -> 0);
    }

    /**
     * Classic Bloom bytes of n items at rate p: n ln(1/p) / ln(2)^2 bits. State takes at most 1.4
     * times it: blocked pages need up to 10% more bits, and each page of at least 2048 bits has 64
     * bytes of heap besides them (25% of 256 bytes); 1.1 * 1.25 = 1.375.
     */
    private static double classicMib(double n, double p) {
        return n * Math.log(1 / p) / (Math.log(2) * Math.log(2)) / 8 / (1 << 20);
    }

    @Test
    void aSmallDedupGetsTheFloor() {
        // 10^7 ids at 1%: 12 MiB of filter, two caches of 64 MiB, 256 MiB of base: under the floor
        assertThat(mib("dedup", "--input", "in", "--expected-items", "10M")).isEqualTo(512);
        assertThat(mib("dedup", "--input", "in")).isEqualTo(512);
        assertThat(mib("dedup", "--pass-through", "--expected-items=1e7")).isEqualTo(512);
    }

    @Test
    void aLargeDedupGetsItsStateTwiceOverPlusTheBase() {
        // 10^9 ids at 1%: the state, a cache of the state plus a quarter, and the base
        double classic = classicMib(1e9, 0.01);
        long heap = mib("dedup", "--expected-items", "1e9", "--fpp", "1%");
        assertThat(heap)
                .isBetween(256 + (long) (2.25 * classic), 256 + (long) (2.25 * 1.4 * classic));
        // a lower rate costs more bits
        assertThat(mib("dedup", "--expected-items", "1e9", "--fpp", "0.001")).isGreaterThan(heap);
        // the cache is per instance, at least 64 MiB each: 16 of them at 10^8 ids (120 MiB of
        // state) take 1 GiB, where 2 take the state plus a quarter
        long two = mib("dedup", "--expected-items", "1e8");
        double classic8 = classicMib(1e8, 0.01);
        assertThat(two)
                .isBetween(256 + (long) (2.25 * classic8), 256 + (long) (2.25 * 1.4 * classic8));
        assertThat(mib("dedup", "--expected-items", "1e8", "--parallelism", "16"))
                .isBetween(256 + 1024 + (long) classicMib(1e8, 0.01), 1450L);
    }

    @Test
    void exactModeMakesRoomForItsIds() {
        // 1.5 x 10^7 entries of 120 bytes (a 36-character id) = 1716.6 MiB, on the 397 MiB of the
        // Bloom part (256 + 2 x 64 + 12.x)
        long heap = mib("dedup", "--expected-items", "10M", "--exact");
        assertThat(heap).isBetween(2100L, 2125L);
        assertThat(mib("dedup", "--exact", "--expected-items", "1e5")).isEqualTo(512);
    }

    @Test
    void theHeapStaysWithinThreeQuartersOfTheMachineButNotUnderTheFloor() {
        String[] exact = {"dedup", "--expected-items", "1e8", "--exact"};
        // 1.5 x 10^8 x 120 bytes: 17 GiB, more than 16 GiB can give
        assertThat(JobHeap.mib(exact, NO_FILES, () -> 0)).isGreaterThan(17_000L);
        assertThat(JobHeap.mib(exact, NO_FILES, () -> 16L << 30)).isEqualTo(12_288);
        assertThat(JobHeap.mib(exact, NO_FILES, () -> 256L << 20)).isEqualTo(512);
        String[] small = {"dedup", "--expected-items", "1e6"};
        assertThat(JobHeap.mib(small, NO_FILES, () -> 16L << 30)).isEqualTo(512);
        assertThat(JobHeap.mib(new String[] {"sql"}, NO_FILES, () -> 16L << 30)).isZero();
        // the machine's memory is not asked for a heap at the floor (it costs 40 ms)
        assertThat(
                        JobHeap.mib(
                                small,
                                NO_FILES,
                                () -> {
                                    throw new AssertionError("asked");
                                }))
                .isEqualTo(512);
    }

    /**
     * The launcher skips building the dedup's config when an upper bound of its state puts the heap
     * at the floor: wherever it does, the config's own sizing gives the floor too.
     */
    @Test
    void theShortcutToTheFloorAgreesWithTheOperatorsSizing() {
        int shortcuts = 0;
        for (long items = 1; items <= 1_000_000_000L; items *= 3) {
            for (double fpp : new double[] {0.5, 0.1, 0.01, 1e-3, 1e-6}) {
                for (boolean exact : new boolean[] {false, true}) {
                    long exactBytes = exact ? (long) (1.5 * 120 * items) : 0;
                    if (JobHeap.underFloor(items, fpp, 2, exactBytes)) {
                        shortcuts++;
                        assertThat(JobHeap.sized(items, fpp, 2, exactBytes, null))
                                .as("%d items at %s, exact %s", items, fpp, exact)
                                .isEqualTo(512);
                    }
                }
            }
        }
        assertThat(shortcuts).isGreaterThan(50);
        assertThat(JobHeap.underFloor(10_000_000, 0.01, 2, 0)).isTrue();
        assertThat(JobHeap.underFloor(100_000_000, 0.01, 2, 0)).isFalse();
    }

    @Test
    void retentionKeepsMoreGenerations() {
        long plain = mib("dedup", "--expected-items", "1e9");
        assertThat(mib("dedup", "--expected-items", "1e9", "--retention", "24h"))
                .isGreaterThan(plain);
    }

    /**
     * Count's first stage takes half the rate (Almeida's split of the compound rate over the
     * cascade): its classic bits are 1.15 times those at the whole rate, and blocked pages at the
     * lower rate need a third more; with the pages' 64 bytes, under twice the classic bytes.
     */
    @Test
    void countSizesOneFilterWithoutACache() {
        assertThat(mib("count", "--expected-items", "1e6")).isEqualTo(512);
        double classic = classicMib(1e9, 0.01);
        assertThat(mib("count", "--expected-items", "1e9"))
                .isBetween(256 + (long) classic, 256 + (long) (2 * classic));
    }

    @Test
    void screenTakesTwiceItsFilterFile() {
        ToLongFunction<String> oneGib = f -> f.equals("big.bloom") ? 1L << 30 : -1;
        assertThat(JobHeap.mib(new String[] {"screen", "--filter", "big.bloom"}, oneGib, () -> 0))
                .isEqualTo(256 + 2048);
        assertThat(JobHeap.mib(new String[] {"screen", "--filter=s3://b/f.bloom"}, oneGib, () -> 0))
                .isZero();
        assertThat(JobHeap.mib(new String[] {"screen", "--input", "x"}, oneGib, () -> 0)).isZero();
    }

    @Test
    void whatTheFlagsDoNotSizeGetsTheDefault() {
        assertThat(mib("sql", "-f", "q.sql")).isZero();
        assertThat(mib("frontier", "--expected-items", "1e9")).isZero();
        assertThat(mib("build-filter", "--expected-items", "1e9")).isZero();
        assertThat(mib()).isZero();
        // per key: the number of keys is the stream's
        assertThat(mib("dedup", "--expected-items", "1e9", "--key-field", "user")).isZero();
        assertThat(mib("count", "--key-field=user")).isZero();
        // flags the command will refuse
        assertThat(mib("dedup", "--expected-items", "lots")).isZero();
        assertThat(mib("dedup", "--fpp", "2")).isZero();
        assertThat(mib("dedup", "--parallelism", "0")).isZero();
    }

    @Test
    void theLastValueOfAFlagCounts() {
        assertThat(JobHeap.value(new String[] {"dedup", "--fpp", "1%", "--fpp=0.2"}, "--fpp"))
                .isEqualTo("0.2");
        assertThat(JobHeap.value(new String[] {"dedup", "--fpp"}, "--fpp")).isNull();
        assertThat(JobHeap.value(new String[] {"--fpp", "x"}, "--fpp")).isNull();
    }

    @Test
    void aStateOfSomeGibibytesIsCountedInBytes() {
        // no int overflow: 10^10 ids at 1%, about 11 GiB of bits
        double classic = classicMib(1e10, 0.01);
        assertThat(Sizing.optimalBits(10_000_000_000L, 0.01)).isGreaterThan(1L << 36);
        assertThat(mib("count", "--expected-items", "1e10"))
                .isBetween(256 + (long) classic, 256 + (long) (2 * classic));
    }
}
