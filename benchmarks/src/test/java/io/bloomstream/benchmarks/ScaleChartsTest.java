package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scale benchmark's goals, computed from CSV files written by hand here. */
class ScaleChartsTest {

    static final String STEPS =
            "contender,events,distinct_ids,seconds,rate_per_s,recovery_step,checkpoint_full_bytes,"
                    + "checkpoint_incremental_bytes,checkpoint_ms,tm_a_rss_bytes,tm_b_rss_bytes\n"
                    + "bloom,2000000,1000000,2.0,500000.0,false,1,1,1,1,1\n"
                    + "bloom,10000000,4000000,10.0,600000.0,false,1,1,1,1,1\n"
                    + "bloom,20000000,7000000,30.0,50000.0,true,1,1,1,1,1\n"
                    + "bloom,40000000,10000000,40.0,450000.0,false,1,1,1,1,1\n"
                    + "exact,2000000,1000000,20.0,100000.0,false,1,1,1,1,1\n"
                    + "exact,10000000,4100000,90.0,40000.0,false,1,1,1,1,1\n";
    static final String CHECKPOINTS =
            "contender,checkpoint,events,distinct_ids,full_bytes,incremental_bytes,duration_ms\n"
                    + "bloom,1,1,1000000,1000,1000,100\n"
                    + "bloom,2,1,4000000,2000,500,100\n"
                    + "exact,1,1,1000000,10000,10000,100\n"
                    + "exact,2,1,4100000,50000,40000,900\n";
    static final String RECOVERY =
            "contender,killed_at_events,killed_at_distinct_ids,restored_events,"
                    + "restored_checkpoint_bytes,running_ms,flowing_ms,caught_up_ms\n"
                    + "bloom,1,5000000,1,2000,5000,5500,9000\n"
                    + "exact,1,2000000,1,50000,9000,30000,60000\n";
    static final String SUMMARY =
            "contender,distinct,finished,events,seconds,output_ids,passed_twice,missing,"
                    + "missing_bound\n"
                    + "bloom,10000000,true,40000000,40.0,9990000,0,10000,100000\n"
                    + "exact,10000000,false,10000000,90.0,4100000,0,-1,-1\n";

    @Test
    void goalsCompareTheContendersAtTheIdsTheSlowerReached(@TempDir Path dir) throws Exception {
        write(dir, STEPS);
        ScaleCharts.Figures f = ScaleCharts.read(dir, "scale-7");
        List<ScaleGoals.Goal> goals = ScaleGoals.goals(f);
        assertThat(goals)
                .extracting(ScaleGoals.Goal::goal)
                .containsExactly(
                        "BloomDedup rate / exact's, same ids",
                        "BloomDedup checkpoint / exact's, same ids",
                        "BloomDedup recovery / exact's (each killed midway: at different ids)",
                        "BloomDedup rate at the end / at 10^6 ids");
        // exact's last step: 4.1M ids at 40,000/s; bloom's step nearest 4.1M: 600,000/s
        assertThat(goals.get(0).value()).isCloseTo(15.0, within(1e-9));
        assertThat(goals.get(0).met()).isTrue();
        // checkpoints nearest exact's last step: 2,000 bytes against 50,000
        assertThat(goals.get(1).value()).isCloseTo(0.04, within(1e-9));
        assertThat(goals.get(1).met()).isTrue();
        // records flowing again: 5.5 s against 30 s
        assertThat(goals.get(2).value()).isCloseTo(5.5 / 30, within(1e-9));
        assertThat(goals.get(2).met()).isTrue();
        // the last clean step (the kill's left out) against the one at 10^6 ids
        assertThat(goals.get(3).value()).isCloseTo(0.9, within(1e-9));
        String report = ScaleGoals.report(f);
        assertThat(report)
                .contains(
                        "| BloomDedup (default config) | finished | 9,990,000 | 40,000,000 | 40 |")
                .contains("| exact ValueState<Boolean> | stopped at budget | 4,100,000 |")
                .doesNotContain("NOT MET");
    }

    @Test
    void aMissedGoalSaysSo(@TempDir Path dir) throws Exception {
        write(dir, STEPS.replace("600000.0", "300000.0"));
        ScaleCharts.Figures f = ScaleCharts.read(dir, "scale-7");
        assertThat(ScaleGoals.goals(f).get(0).value()).isCloseTo(7.5, within(1e-9));
        assertThat(ScaleGoals.report(f))
                .contains(
                        "| BloomDedup rate / exact's, same ids | 300,000/s at 4.00M ids vs 40,000/s at 4.10M | 7.50 | >= 10.0 | NOT MET |");
    }

    @Test
    void chartsAreDrawn(@TempDir Path dir) throws Exception {
        write(dir, STEPS);
        ScaleCharts.main(new String[] {dir.toString(), "7"});
        for (String chart :
                List.of(
                        "rate",
                        "checkpoint-size",
                        "checkpoint-incremental",
                        "checkpoint-duration",
                        "recovery")) {
            assertThat(dir.resolve("scale-7-" + chart + ".png")).isNotEmptyFile();
        }
        assertThat(dir.resolve("scale-7.md")).isNotEmptyFile();
    }

    /** The four CSV files of a run "7" in {@code dir}, with {@code steps} as its steps. */
    private static void write(Path dir, String steps) throws java.io.IOException {
        Files.writeString(dir.resolve("scale-7-steps.csv"), steps);
        Files.writeString(dir.resolve("scale-7-checkpoints.csv"), CHECKPOINTS);
        Files.writeString(dir.resolve("scale-7-recovery.csv"), RECOVERY);
        Files.writeString(dir.resolve("scale-7-summary.csv"), SUMMARY);
    }
}
