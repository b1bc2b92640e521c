package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Tests for {@link UpdatingInput}, the retract changelog of {@link SqlBenchmark}. */
class UpdatingInputTest {

    /**
     * Replays the changelog of {@code n} values with deletes {@code lag} rows behind: every delete
     * removes a row inserted before and still present, and the odd rows (n values) stay.
     */
    private static void checkChangelog(long n, long lag) {
        Set<Long> present = new HashSet<>();
        long inserts = 0;
        long deletes = 0;
        long maxBehind = 0;
        long lastInserted = -1;
        for (long i = 0; i < UpdatingInput.changelogRows(n); i++) {
            long e = UpdatingInput.entry(i, n, lag);
            if (e >= 0) {
                assertThat(e).as("inserts in row order").isEqualTo(lastInserted + 1);
                lastInserted = e;
                assertThat(present.add(e)).as("row %d inserted once", e).isTrue();
                inserts++;
            } else {
                long row = UpdatingInput.deletedRow(e);
                assertThat(row % 2).as("only even rows are deleted").isZero();
                assertThat(present.remove(row)).as("row %d deleted while present", row).isTrue();
                maxBehind = Math.max(maxBehind, lastInserted - row);
                deletes++;
            }
        }
        assertThat(inserts).isEqualTo(2 * n);
        assertThat(deletes).isEqualTo(n);
        assertThat(present).hasSize((int) n).allMatch(row -> row % 2 == 1);
        assertThat(maxBehind).isLessThanOrEqualTo(Math.max(lag, 1) + 1);
    }

    @Test
    void insertsTwoNRowsAndDeletesTheEvenOnesLagRowsBehindLeavingN() {
        assertThat(UpdatingInput.changelogRows(1_000_000)).isEqualTo(3_000_000);
        checkChangelog(100_000, UpdatingInput.LAG);
        checkChangelog(7, 4);
    }

    @Test
    void shortChangelogsDeleteWithTheLagThatFits() {
        // fewer values than the lag (the warm-up of a small run): every even row still goes
        checkChangelog(3, UpdatingInput.LAG);
        checkChangelog(1, UpdatingInput.LAG);
        checkChangelog(5, 0);
    }

    @Test
    void rowsAreDistinctValues() {
        Set<Long> values = new HashSet<>();
        for (long row = 0; row < 100_000; row++) {
            values.add(UpdatingInput.valueOf(row));
        }
        assertThat(values).hasSize(100_000);
    }

    @Test
    void deletedAndPresentValuesMeetInEveryGroup() {
        // the groups of the count queries: x mod 16 in [0, 16) (SqlQueries.GROUP_OF_X); every
        // group must see retractions and keep values, or the retractions would empty groups of
        // their own
        Map<Long, long[]> perGroup = new TreeMap<>();
        for (long row = 0; row < 20_000; row++) {
            long g = Math.floorMod(UpdatingInput.valueOf(row), SqlQueries.GROUPS);
            perGroup.computeIfAbsent(g, k -> new long[2])[(int) (row % 2)]++;
        }
        assertThat(perGroup).hasSize(SqlQueries.GROUPS);
        assertThat(perGroup.values()).allMatch(deletedPresent -> deletedPresent[0] > 0);
        assertThat(perGroup.values()).allMatch(deletedPresent -> deletedPresent[1] > 0);
    }
}
