package io.bloomstream.benchmarks;

import io.bloomstream.benchmarks.ScaleCharts.Checkpoint;
import io.bloomstream.benchmarks.ScaleCharts.Figures;
import io.bloomstream.benchmarks.ScaleCharts.Outcome;
import io.bloomstream.benchmarks.ScaleCharts.Recovery;
import io.bloomstream.benchmarks.ScaleCharts.Step;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The goals of issue 44 from one scale run's figures ({@link ScaleCharts#read}), each met or NOT
 * MET, compared at the same number of distinct ids; and the run's table per contender, as Markdown.
 */
final class ScaleGoals {

    /** One goal of the issue: {@code value} against {@code target}, a ratio. */
    record Goal(String goal, String measured, double value, double target, boolean atLeast) {
        boolean met() {
            return atLeast ? value >= target : value <= target;
        }
    }

    private ScaleGoals() {}

    /** The steps of {@code contender} that are not the kill's. */
    static List<Step> clean(Figures f, String contender) {
        return f.steps(contender).stream().filter(s -> !s.recovery() && s.rate() > 0).toList();
    }

    /** The last clean step of {@code contender}: its rate at the most ids it reached. */
    static Optional<Step> last(Figures f, String contender) {
        List<Step> s = clean(f, contender);
        return s.isEmpty() ? Optional.empty() : Optional.of(s.get(s.size() - 1));
    }

    /** The clean step of {@code contender} whose distinct ids are nearest {@code distinct}. */
    static Optional<Step> at(Figures f, String contender, long distinct) {
        return clean(f, contender).stream()
                .min(
                        Comparator.comparingDouble(
                                s -> Math.abs(Math.log((double) s.distinct() / distinct))));
    }

    /**
     * The fastest clean step of {@code contender} at up to {@code distinct} ids (its first steps
     * include the JIT's and RocksDB's warm-up): its rate at about 10^6 ids.
     */
    static Optional<Step> bestUpTo(Figures f, String contender, long distinct) {
        return clean(f, contender).stream()
                .filter(s -> s.distinct() <= distinct)
                .max(Comparator.comparingDouble(Step::rate));
    }

    /** The completed checkpoint of {@code contender} nearest {@code distinct} ids. */
    static Optional<Checkpoint> checkpointAt(Figures f, String contender, long distinct) {
        return f.checkpoints().stream()
                .filter(c -> c.contender().equals(contender) && c.distinct() > 0)
                .min(
                        Comparator.comparingDouble(
                                c -> Math.abs(Math.log((double) c.distinct() / distinct))));
    }

    /**
     * The rate of {@code fast} over {@code slow}'s, both at the ids {@code slow} reached (the fewer
     * of the two, when {@code fast} stopped first).
     */
    static Optional<Goal> rateGoal(
            Figures f, String goal, String fast, String slow, double target) {
        Optional<Step> s = last(f, slow);
        Optional<Step> q = last(f, fast);
        if (s.isEmpty() || q.isEmpty()) {
            return Optional.empty();
        }
        long ids = Math.min(s.get().distinct(), q.get().distinct());
        Step a = at(f, fast, ids).orElseThrow();
        Step b = at(f, slow, ids).orElseThrow();
        return Optional.of(
                new Goal(
                        goal,
                        String.format(
                                Locale.ROOT,
                                "%,.0f/s at %s ids vs %,.0f/s at %s",
                                a.rate(),
                                ids(a.distinct()),
                                b.rate(),
                                ids(b.distinct())),
                        a.rate() / b.rate(),
                        target,
                        true));
    }

    /** The goals that this run's contenders allow. */
    static List<Goal> goals(Figures f) {
        List<Goal> goals = new ArrayList<>();
        rateGoal(f, "BloomDedup rate / exact's, same ids", "bloom", "exact", 10)
                .ifPresent(goals::add);
        last(f, "exact")
                .flatMap(e -> checkpointAt(f, "exact", e.distinct()))
                .ifPresent(
                        e ->
                                checkpointAt(f, "bloom", e.distinct())
                                        .ifPresent(
                                                b ->
                                                        goals.add(
                                                                new Goal(
                                                                        "BloomDedup checkpoint / exact's, same ids",
                                                                        String.format(
                                                                                Locale.ROOT,
                                                                                "%s at %s ids vs %s at %s",
                                                                                mib(b.full()),
                                                                                ids(b.distinct()),
                                                                                mib(e.full()),
                                                                                ids(e.distinct())),
                                                                        (double) b.full()
                                                                                / e.full(),
                                                                        1 / 20.0,
                                                                        false))));
        f.recovery("bloom")
                .ifPresent(
                        b ->
                                f.recovery("exact")
                                        .ifPresent(
                                                e ->
                                                        goals.add(
                                                                new Goal(
                                                                        "BloomDedup recovery / exact's (each killed midway: at different ids)",
                                                                        String.format(
                                                                                Locale.ROOT,
                                                                                "%.1f s (at %s ids) vs %.1f s (at %s)",
                                                                                b.flowingMs()
                                                                                        / 1000.0,
                                                                                ids(
                                                                                        b
                                                                                                .killedAtDistinct()),
                                                                                e.flowingMs()
                                                                                        / 1000.0,
                                                                                ids(
                                                                                        e
                                                                                                .killedAtDistinct())),
                                                                        (double) b.flowingMs()
                                                                                / e.flowingMs(),
                                                                        1 / 5.0,
                                                                        false))));
        last(f, "bloom")
                .ifPresent(
                        end ->
                                bestUpTo(f, "bloom", 2_000_000L)
                                        .ifPresent(
                                                start ->
                                                        goals.add(
                                                                new Goal(
                                                                        "BloomDedup rate at the end / at 10^6 ids",
                                                                        String.format(
                                                                                Locale.ROOT,
                                                                                "%,.0f/s at %s ids vs %,.0f/s at %s",
                                                                                end.rate(),
                                                                                ids(end.distinct()),
                                                                                start.rate(),
                                                                                ids(
                                                                                        start
                                                                                                .distinct())),
                                                                        end.rate() / start.rate(),
                                                                        0.7,
                                                                        true))));
        rateGoal(f, "exact mode rate / exact's, same ids", "bloom-exact", "exact", 3)
                .ifPresent(goals::add);
        rateGoal(
                        f,
                        "BLOOM_DEDUP rate / ROW_NUMBER's, same ids",
                        "sql-bloom-dedup",
                        "sql-row-number",
                        5)
                .ifPresent(goals::add);
        return goals;
    }

    /** The run's table (per contender) and the goals, as Markdown. */
    static String report(Figures f) {
        StringBuilder b = new StringBuilder();
        b.append(
                "| contender | ended | distinct ids | events | s | rate at the end | last checkpoint"
                        + " (full / incremental, duration) | recovery: running / flowing / caught"
                        + " up | TaskManager RSS (max) |\n");
        b.append("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: |\n");
        for (String c : ScaleCharts.contenders(f)) {
            Optional<Outcome> o = f.outcome(c);
            Optional<Step> end = last(f, c);
            Optional<Checkpoint> k =
                    f.checkpoints().stream()
                            .filter(x -> x.contender().equals(c))
                            .reduce((x, y) -> y);
            Optional<Recovery> r = f.recovery(c);
            long rss =
                    f.steps(c).stream()
                            .mapToLong(s -> Math.max(s.rssA(), s.rssB()))
                            .max()
                            .orElse(0);
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                            ScaleCharts.NAMES.getOrDefault(c, c),
                            o.map(x -> x.finished() ? "finished" : "stopped at budget").orElse("-"),
                            o.map(x -> String.format(Locale.ROOT, "%,d", x.ids())).orElse("-"),
                            o.map(x -> String.format(Locale.ROOT, "%,d", x.events())).orElse("-"),
                            o.map(x -> String.format(Locale.ROOT, "%.0f", x.seconds())).orElse("-"),
                            end.map(s -> String.format(Locale.ROOT, "%,.0f/s", s.rate()))
                                    .orElse("-"),
                            k.map(
                                            x ->
                                                    mib(x.full())
                                                            + " / "
                                                            + mib(x.incremental())
                                                            + ", "
                                                            + String.format(
                                                                    Locale.ROOT,
                                                                    "%.1f s",
                                                                    x.ms() / 1000.0))
                                    .orElse("-"),
                            r.map(
                                            x ->
                                                    String.format(
                                                            Locale.ROOT,
                                                            "%.1f / %.1f / %.1f s",
                                                            x.runningMs() / 1000.0,
                                                            x.flowingMs() / 1000.0,
                                                            x.caughtUpMs() / 1000.0))
                                    .orElse("-"),
                            mib(rss)));
        }
        b.append("\n| goal | measured | ratio | target | |\n| --- | --- | ---: | ---: | --- |\n");
        for (Goal g : goals(f)) {
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %.3g | %s %.3g | %s |\n",
                            g.goal(),
                            g.measured(),
                            g.value(),
                            g.atLeast() ? ">=" : "<=",
                            g.target(),
                            g.met() ? "met" : "NOT MET"));
        }
        return b.toString();
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%,.1f MiB", bytes / 1048576.0);
    }

    static String ids(long n) {
        return n >= 1_000_000
                ? String.format(Locale.ROOT, "%.3gM", n / 1e6)
                : String.format(Locale.ROOT, "%,d", n);
    }
}
