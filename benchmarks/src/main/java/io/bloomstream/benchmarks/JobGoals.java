package io.bloomstream.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The goals a {@link JobBenchmark} run is held to, and how it met them: per cell (distinct ids,
 * parallelism), a goal's ratio is the median records/s of its contender over the rounds divided by
 * the median of its baseline (the same figures as the medians table), and its spread is the lowest
 * and highest ratio of the two runs of one round. A goal is met when that ratio of medians is at
 * least its factor. Failed runs are left out; a run stopped at its budget counts with the rate it
 * had reached, and is named beside the verdict. A goal whose contender or baseline has no run in a
 * cell is not reported for that cell.
 */
final class JobGoals {

    private JobGoals() {}

    /**
     * A goal: {@code contender}'s records/s at least {@code atLeast} times {@code baseline}'s, both
     * named as "backend pipeline" and measured in the same cell.
     */
    record Goal(String name, String contender, String baseline, double atLeast) {}

    /** One goal measured in one cell. */
    record Result(
            Goal goal,
            String cell,
            double ratio,
            double minRoundRatio,
            double maxRoundRatio,
            int rounds,
            String note) {

        boolean met() {
            return ratio >= goal.atLeast();
        }
    }

    /**
     * Issue 42's goals, set on 10^7 distinct string ids seen twice, default config, parallelism 1,
     * medians of the rounds: on the heap Bloom dedup at 0.8x a keyed pass-through and 3x exact
     * dedup, on RocksDB at 0.8x RocksDB's pass-through, and exact mode on the heap no slower than
     * exact dedup.
     */
    static final List<Goal> ISSUE_42 =
            List.of(
                    new Goal(
                            "heap near pass-through",
                            "hashmap bloom-default:string",
                            "hashmap pass-through:string",
                            0.8),
                    new Goal(
                            "heap 3x exact",
                            "hashmap bloom-default:string",
                            "hashmap exact:string",
                            3.0),
                    new Goal(
                            "rocksdb near pass-through",
                            "rocksdb bloom-default:string",
                            "rocksdb pass-through:string",
                            0.8),
                    new Goal(
                            "heap exact mode vs exact",
                            "hashmap bloom-exact:string",
                            "hashmap exact:string",
                            1.0));

    /** The distinct ids, passes and parallelism {@link #ISSUE_42} is set on. */
    static final String ISSUE_42_SETTING = "10000000 ids x 2, p1";

    /** The cell of a run, as in the medians table: "10000000 ids, p1". */
    static String cellOf(JobRun r) {
        return r.distinctIds() + " ids, p" + r.parallelism();
    }

    /** The goals measured in {@code runs} (round i of {@code runs.get(i)} is roundOf.get(i)). */
    static List<Result> evaluate(List<Goal> goals, List<JobRun> runs, List<Integer> roundOf) {
        // cell -> contender -> round -> run
        Map<String, Map<String, TreeMap<Integer, JobRun>>> cells = new LinkedHashMap<>();
        Map<String, Map<String, Integer>> failed = new LinkedHashMap<>();
        for (int i = 0; i < runs.size(); i++) {
            JobRun r = runs.get(i);
            String contender = r.backend() + " " + r.pipeline();
            if (r.status().startsWith("failed") || !(r.recordsPerSecond() > 0)) {
                failed.computeIfAbsent(cellOf(r), c -> new LinkedHashMap<>())
                        .merge(contender, 1, Integer::sum);
                continue;
            }
            cells.computeIfAbsent(cellOf(r), c -> new LinkedHashMap<>())
                    .computeIfAbsent(contender, c -> new TreeMap<>())
                    .put(roundOf.get(i), r);
        }
        List<Result> results = new ArrayList<>();
        for (Map.Entry<String, Map<String, TreeMap<Integer, JobRun>>> cell : cells.entrySet()) {
            for (Goal g : goals) {
                TreeMap<Integer, JobRun> a = cell.getValue().get(g.contender());
                TreeMap<Integer, JobRun> b = cell.getValue().get(g.baseline());
                if (a != null && b != null) {
                    Map<String, Integer> f = failed.getOrDefault(cell.getKey(), Map.of());
                    results.add(result(g, cell.getKey(), a, b, f));
                }
            }
        }
        return results;
    }

    private static Result result(
            Goal g,
            String cell,
            TreeMap<Integer, JobRun> contender,
            TreeMap<Integer, JobRun> baseline,
            Map<String, Integer> failed) {
        double min = Double.NaN;
        double max = Double.NaN;
        int rounds = 0;
        for (Map.Entry<Integer, JobRun> e : contender.entrySet()) {
            JobRun b = baseline.get(e.getKey());
            if (b != null) {
                double ratio = e.getValue().recordsPerSecond() / b.recordsPerSecond();
                min = rounds == 0 ? ratio : Math.min(min, ratio);
                max = rounds == 0 ? ratio : Math.max(max, ratio);
                rounds++;
            }
        }
        List<String> notes = new ArrayList<>();
        for (String c : List.of(g.contender(), g.baseline())) {
            TreeMap<Integer, JobRun> rs = c.equals(g.contender()) ? contender : baseline;
            long stopped =
                    rs.values().stream()
                            .filter(r -> r.status().equals(JobRun.STOPPED_AT_BUDGET))
                            .count();
            if (stopped > 0) {
                notes.add(c + " stopped at budget in " + stopped + " of " + rs.size() + " runs");
            }
            int f = failed.getOrDefault(c, 0);
            if (f > 0) {
                notes.add(c + " failed in " + f + (f == 1 ? " run" : " runs") + ", left out");
            }
        }
        return new Result(
                g,
                cell,
                median(contender) / median(baseline),
                min,
                max,
                rounds,
                String.join("; ", notes));
    }

    private static double median(TreeMap<Integer, JobRun> runs) {
        return SqlRounds.median(
                runs.values().stream().mapToDouble(JobRun::recordsPerSecond).toArray());
    }

    /**
     * A Markdown section per cell with a table of its results, then the goals not measured in any
     * cell; empty when no goal was measured.
     */
    static String markdown(List<Goal> goals, List<Result> results) {
        if (results.isEmpty()) {
            return "";
        }
        Map<String, List<Result>> byCell = new LinkedHashMap<>();
        for (Result r : results) {
            byCell.computeIfAbsent(r.cell(), c -> new ArrayList<>()).add(r);
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<Result>> cell : byCell.entrySet()) {
            out.append(String.format(Locale.ROOT, "%n### Goals: %s%n%n", cell.getKey()))
                    .append("Issue 42 sets them on ")
                    .append(ISSUE_42_SETTING)
                    .append("; the ratio is of the medians over the rounds, the spread of")
                    .append(" each round's pair.\n\n")
                    .append("| goal | contender | baseline | target | median ratio |")
                    .append(" per round (min-max) | met |\n")
                    .append("|---|---|---|---|---|---|---|\n");
            for (Result r : cell.getValue()) {
                out.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %s | %s | >= %.1fx | %.3fx | %s | %s |%n",
                                r.goal().name(),
                                r.goal().contender(),
                                r.goal().baseline(),
                                r.goal().atLeast(),
                                r.ratio(),
                                r.rounds() > 1
                                        ? String.format(
                                                Locale.ROOT,
                                                "%.3f-%.3fx",
                                                r.minRoundRatio(),
                                                r.maxRoundRatio())
                                        : "-",
                                (r.met() ? "met" : "not met")
                                        + (r.note().isEmpty() ? "" : " (" + r.note() + ")")));
            }
        }
        List<String> missing = new ArrayList<>();
        for (Goal g : goals) {
            if (results.stream().noneMatch(r -> r.goal().equals(g))) {
                missing.add(g.name());
            }
        }
        if (!missing.isEmpty()) {
            out.append("\nNot measured here: ")
                    .append(String.join(", ", missing))
                    .append(" (a contender or baseline did not run).\n");
        }
        return out.toString();
    }
}
