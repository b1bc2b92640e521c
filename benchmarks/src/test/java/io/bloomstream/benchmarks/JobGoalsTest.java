package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link JobGoals}. */
class JobGoalsTest {

    private static final long IDS = 10_000_000;

    private final List<JobRun> runs = new ArrayList<>();
    private final List<Integer> roundOf = new ArrayList<>();

    /** A made-up run of {@code recordsPerSecond} (records over one second) in a round. */
    private void run(int round, String backend, String pipeline, long recordsPerSecond) {
        run(round, backend, pipeline, recordsPerSecond, JobRun.COMPLETE);
    }

    private void run(int round, String backend, String pipeline, long rate, String status) {
        runs.add(
                new JobRun(
                        IDS, 2, 0.01, backend, 1, pipeline, rate, 1.0, -1, rate, status, -1, -1));
        roundOf.add(round);
    }

    private static JobGoals.Result only(List<JobGoals.Result> results, String goal) {
        return results.stream().filter(r -> r.goal().name().equals(goal)).findFirst().orElseThrow();
    }

    @Test
    void theRatioIsOfTheMediansAndTheSpreadOfEachRoundsPair() {
        // bloom 3.0M, 2.0M, 2.6M (median 2.6M); pass-through 4.0M, 2.0M, 3.0M (median 3.0M)
        run(1, "hashmap", "bloom-default:string", 3_000_000);
        run(1, "hashmap", "pass-through:string", 4_000_000);
        run(2, "hashmap", "pass-through:string", 2_000_000);
        run(2, "hashmap", "bloom-default:string", 2_000_000);
        run(3, "hashmap", "bloom-default:string", 2_600_000);
        run(3, "hashmap", "pass-through:string", 3_000_000);

        JobGoals.Result r =
                only(JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf), "heap near pass-through");

        assertThat(r.cell()).isEqualTo("10000000 ids, p1");
        assertThat(r.ratio()).isCloseTo(2.6 / 3.0, within(1e-9)); // 0.867, not a mean of ratios
        assertThat(r.minRoundRatio()).isCloseTo(0.75, within(1e-9)); // round 1: 3.0 / 4.0
        assertThat(r.maxRoundRatio()).isCloseTo(1.0, within(1e-9)); // round 2: 2.0 / 2.0
        assertThat(r.rounds()).isEqualTo(3);
        assertThat(r.met()).isTrue(); // 0.867 >= 0.8
    }

    @Test
    void aGoalIsMetAtItsFactorAndNotBelow() {
        run(1, "hashmap", "bloom-default:string", 3_000_000);
        run(1, "hashmap", "exact:string", 1_000_000);
        run(1, "hashmap", "bloom-exact:string", 999_999);
        run(1, "rocksdb", "bloom-default:string", 799_999);
        run(1, "rocksdb", "pass-through:string", 1_000_000);

        List<JobGoals.Result> results = JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf);

        assertThat(only(results, "heap 3x exact").met()).isTrue(); // exactly 3.0
        assertThat(only(results, "heap exact mode vs exact").met()).isFalse(); // 0.999999
        assertThat(only(results, "rocksdb near pass-through").met()).isFalse(); // 0.799999
        assertThat(only(results, "rocksdb near pass-through").ratio())
                .isCloseTo(0.799999, within(1e-9));
    }

    @Test
    void skipsAGoalWhoseContenderOrBaselineDidNotRun() {
        run(1, "hashmap", "bloom-default:string", 3_000_000);
        run(1, "hashmap", "pass-through:string", 3_000_000);
        run(1, "rocksdb", "bloom-default:string", 1_000_000); // no rocksdb pass-through
        run(1, "hashmap", "bloom-exact:string", 1_000_000); // no exact at all

        List<JobGoals.Result> results = JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf);

        assertThat(results)
                .extracting(r -> r.goal().name())
                .containsExactly("heap near pass-through");
        assertThat(JobGoals.markdown(JobGoals.ISSUE_42, results))
                .contains("| heap near pass-through | hashmap bloom-default:string |")
                .contains("| 1.000x | - | met |") // one round: no spread
                .contains("Not measured here: heap 3x exact, rocksdb near pass-through");
    }

    @Test
    void leavesFailedRunsOutAndNamesRunsStoppedAtTheBudget() {
        run(1, "hashmap", "bloom-default:string", 3_000_000);
        run(1, "hashmap", "exact:string", 900_000, JobRun.STOPPED_AT_BUDGET);
        run(2, "hashmap", "exact:string", 10, "failed: boom");
        run(2, "hashmap", "bloom-default:string", 2_000_000);

        JobGoals.Result r =
                only(JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf), "heap 3x exact");

        assertThat(r.rounds()).isEqualTo(1); // only round 1 has both
        assertThat(r.ratio()).isCloseTo(2_500_000 / 900_000.0, within(1e-9));
        assertThat(r.met()).isFalse(); // 2.78 < 3
        assertThat(r.note())
                .isEqualTo(
                        "hashmap exact:string stopped at budget in 1 of 1 runs;"
                                + " hashmap exact:string failed in 1 run, left out");
    }

    @Test
    void printsNothingWhenNoGoalCouldBeMeasured() {
        run(1, "hashmap", "pass-through", 3_000_000); // long ids: the goals are on strings
        run(1, "hashmap", "bloom-default", 3_000_000);

        List<JobGoals.Result> results = JobGoals.evaluate(JobGoals.ISSUE_42, runs, roundOf);

        assertThat(results).isEmpty();
        assertThat(JobGoals.markdown(JobGoals.ISSUE_42, results)).isEmpty();
    }
}
