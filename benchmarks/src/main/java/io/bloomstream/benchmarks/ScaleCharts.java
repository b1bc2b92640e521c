package io.bloomstream.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.style.Styler;

/**
 * The charts and the goals of the scale benchmark on a standalone cluster (issue 44), from the CSV
 * files jobs' {@code ScaleBenchmark} writes ({@code scale-N-steps.csv}, {@code -checkpoints.csv},
 * {@code -recovery.csv}, {@code -summary.csv}): the rate against the distinct ids so far, the
 * checkpoints' full size, the size they uploaded and their duration against the distinct ids, and
 * the recovery times after the kill; then the goals, each met or NOT MET, compared at the
 * same number of distinct ids.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.ScaleCharts
 * DIR N [CHART_DIR]}: reads {@code DIR/scale-N-*.csv}, writes {@code CHART_DIR/scale-N-*.png}
 * (default DIR) and prints the goals as a Markdown table (also written to {@code DIR/scale-N.md}).
 */
public final class ScaleCharts {

    /** The contenders, in the order of the legend, with their names and colours. */
    static final Map<String, String> NAMES = new LinkedHashMap<>();

    private static final Map<String, Color> COLORS = new LinkedHashMap<>();

    static {
        NAMES.put("pass-through", "keyed pass-through (no dedup)");
        NAMES.put("bloom", "BloomDedup (default config)");
        NAMES.put("bloom-exact", "BloomDedup exact mode");
        NAMES.put("exact", "exact ValueState<Boolean>");
        NAMES.put("exact-rocksdb-bloom", "exact, RocksDB bloom filters on");
        NAMES.put("sql-bloom-dedup", "SQL BLOOM_DEDUP");
        NAMES.put("sql-row-number", "SQL ROW_NUMBER");
        COLORS.put("pass-through", new Color(0x7f, 0x7f, 0x7f));
        COLORS.put("bloom", new Color(0x1f, 0x77, 0xb4));
        COLORS.put("bloom-exact", new Color(0x2c, 0xa0, 0x2c));
        COLORS.put("exact", new Color(0xd6, 0x27, 0x28));
        COLORS.put("exact-rocksdb-bloom", new Color(0xff, 0x7f, 0x0e));
        COLORS.put("sql-bloom-dedup", new Color(0x94, 0x67, 0xbd));
        COLORS.put("sql-row-number", new Color(0x8c, 0x56, 0x4b));
    }

    /** One step of a run: the rate over the events since the step before. */
    record Step(
            String contender,
            long events,
            long distinct,
            double rate,
            boolean recovery,
            long checkpointFull,
            long checkpointIncremental,
            long checkpointMs,
            long rssA,
            long rssB) {}

    /** One completed checkpoint. */
    record Checkpoint(String contender, long distinct, long full, long incremental, long ms) {}

    /** What the kill cost one contender. */
    record Recovery(
            String contender,
            long killedAtDistinct,
            long restoredBytes,
            long runningMs,
            long flowingMs,
            long caughtUpMs) {}

    /** How a contender's run ended. */
    record Outcome(String contender, boolean finished, long events, double seconds, long ids) {}

    /** All of one run's figures. */
    record Figures(
            List<Step> steps,
            List<Checkpoint> checkpoints,
            List<Recovery> recoveries,
            List<Outcome> outcomes) {

        List<Step> steps(String contender) {
            return steps.stream().filter(s -> s.contender().equals(contender)).toList();
        }

        Optional<Recovery> recovery(String contender) {
            return recoveries.stream().filter(r -> r.contender().equals(contender)).findFirst();
        }

        Optional<Outcome> outcome(String contender) {
            return outcomes.stream().filter(o -> o.contender().equals(contender)).findFirst();
        }
    }

    private ScaleCharts() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: ScaleCharts DIR N [CHART_DIR]");
        }
        Path dir = Path.of(args[0]);
        String prefix = "scale-" + args[1];
        Path charts = args.length > 2 ? Path.of(args[2]) : dir;
        Figures f = read(dir, prefix);
        LogLogChart.savePng(rateChart(f), charts.resolve(prefix + "-rate.png"));
        LogLogChart.savePng(
                checkpointChart(f, "full size", "MiB", c -> c.full() / 1048576.0),
                charts.resolve(prefix + "-checkpoint-size.png"));
        LogLogChart.savePng(
                checkpointChart(
                        f, "size uploaded (incremental)", "MiB", c -> c.incremental() / 1048576.0),
                charts.resolve(prefix + "-checkpoint-incremental.png"));
        LogLogChart.savePng(
                checkpointChart(f, "duration", "s", c -> c.ms() / 1000.0),
                charts.resolve(prefix + "-checkpoint-duration.png"));
        if (!f.recoveries().isEmpty()) {
            org.knowm.xchart.BitmapEncoder.saveBitmap(
                    recoveryChart(f),
                    charts.resolve(prefix + "-recovery.png").toString(),
                    org.knowm.xchart.BitmapEncoder.BitmapFormat.PNG);
        }
        String report = ScaleGoals.report(f);
        Files.writeString(dir.resolve(prefix + ".md"), report);
        System.out.print(report);
    }

    static Figures read(Path dir, String prefix) throws IOException {
        List<Step> steps = new ArrayList<>();
        for (String[] r : rows(dir.resolve(prefix + "-steps.csv"), 11)) {
            steps.add(
                    new Step(
                            r[0],
                            Long.parseLong(r[1]),
                            Long.parseLong(r[2]),
                            Double.parseDouble(r[4]),
                            Boolean.parseBoolean(r[5]),
                            Long.parseLong(r[6]),
                            Long.parseLong(r[7]),
                            Long.parseLong(r[8]),
                            Long.parseLong(r[9]),
                            Long.parseLong(r[10])));
        }
        List<Checkpoint> checkpoints = new ArrayList<>();
        for (String[] r : rows(dir.resolve(prefix + "-checkpoints.csv"), 7)) {
            checkpoints.add(
                    new Checkpoint(
                            r[0],
                            Long.parseLong(r[3]),
                            Long.parseLong(r[4]),
                            Long.parseLong(r[5]),
                            Long.parseLong(r[6])));
        }
        List<Recovery> recoveries = new ArrayList<>();
        for (String[] r : rows(dir.resolve(prefix + "-recovery.csv"), 8)) {
            recoveries.add(
                    new Recovery(
                            r[0],
                            Long.parseLong(r[2]),
                            Long.parseLong(r[4]),
                            Long.parseLong(r[5]),
                            Long.parseLong(r[6]),
                            Long.parseLong(r[7])));
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (String[] r : rows(dir.resolve(prefix + "-summary.csv"), 9)) {
            outcomes.add(
                    new Outcome(
                            r[0],
                            Boolean.parseBoolean(r[2]),
                            Long.parseLong(r[3]),
                            Double.parseDouble(r[4]),
                            Long.parseLong(r[5])));
        }
        return new Figures(steps, checkpoints, recoveries, outcomes);
    }

    private static List<String[]> rows(Path csv, int fields) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        List<String[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",", -1);
            if (f.length != fields) {
                throw new IOException(
                        csv + " line " + (i + 1) + ": " + fields + " fields expected");
            }
            rows.add(f);
        }
        return rows;
    }

    /** Events per second against distinct ids so far; the steps with the kill left out. */
    static XYChart rateChart(Figures f) {
        XYChart chart =
                LogLogChart.create(
                        "dedup on a standalone cluster, RocksDB, p=2: rate as the ids grow",
                        "distinct ids so far",
                        "events per second over the step");
        for (String c : contenders(f)) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (Step s : f.steps(c)) {
                if (!s.recovery() && s.distinct() > 0 && s.rate() > 0) {
                    x.add((double) s.distinct());
                    y.add(s.rate());
                }
            }
            if (x.isEmpty()) {
                continue;
            }
            LogLogChart.addLine(chart, NAMES.getOrDefault(c, c), x, y, color(c), "heap");
            if (f.outcome(c).map(o -> !o.finished()).orElse(false)) {
                LogLogChart.markStopped(
                        chart,
                        NAMES.getOrDefault(c, c),
                        List.of(x.get(x.size() - 1)),
                        List.of(y.get(y.size() - 1)));
            }
        }
        return chart;
    }

    /** A checkpoint figure against distinct ids, a line per contender. */
    static XYChart checkpointChart(
            Figures f, String what, String unit, ToDoubleFunction<Checkpoint> value) {
        XYChart chart =
                LogLogChart.create(
                        "RocksDB incremental checkpoints every 10 s: " + what,
                        "distinct ids so far",
                        what + " (" + unit + ")");
        for (String c : contenders(f)) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (Checkpoint k : f.checkpoints()) {
                if (k.contender().equals(c) && k.distinct() > 0 && value.applyAsDouble(k) > 0) {
                    x.add((double) k.distinct());
                    y.add(value.applyAsDouble(k));
                }
            }
            if (!x.isEmpty()) {
                LogLogChart.addLine(chart, NAMES.getOrDefault(c, c), x, y, color(c), "heap");
            }
        }
        return chart;
    }

    /** Seconds from the kill: all subtasks running, records flowing past the restore, caught up. */
    static CategoryChart recoveryChart(Figures f) {
        CategoryChart chart =
                new CategoryChartBuilder()
                        .width(900)
                        .height(560)
                        .title("one TaskManager killed with SIGKILL midway: time to recover")
                        .xAxisTitle("contender")
                        .yAxisTitle("seconds from the kill")
                        .build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setXAxisLabelRotation(20);
        List<String> names = new ArrayList<>();
        List<Double> running = new ArrayList<>();
        List<Double> flowing = new ArrayList<>();
        List<Double> caught = new ArrayList<>();
        for (String c : contenders(f)) {
            f.recovery(c)
                    .ifPresent(
                            r -> {
                                names.add(c);
                                running.add(r.runningMs() / 1000.0);
                                flowing.add(r.flowingMs() / 1000.0);
                                caught.add(r.caughtUpMs() / 1000.0);
                            });
        }
        chart.addSeries("all subtasks RUNNING (state restored)", names, running);
        chart.addSeries("records flow past the restored point", names, flowing);
        chart.addSeries("back at the events read at the kill", names, caught);
        return chart;
    }

    static List<String> contenders(Figures f) {
        List<String> out = new ArrayList<>();
        for (String c : NAMES.keySet()) {
            if (f.outcome(c).isPresent() || !f.steps(c).isEmpty()) {
                out.add(c);
            }
        }
        for (Outcome o : f.outcomes()) {
            if (!out.contains(o.contender())) {
                out.add(o.contender());
            }
        }
        return out;
    }

    private static Color color(String contender) {
        return COLORS.getOrDefault(contender, Color.GRAY);
    }
}
