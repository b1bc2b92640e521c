package io.bloomstream.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.XYChart;

/**
 * Draws how the command line's cost grows with its input (issue 42): the median wall time and peak
 * resident memory of {@code dedup}, {@code sort -u} and {@code awk} against the lines of the file,
 * from the CSV that {@code benchmarks/command/scale.sh} appends to. One line per contender, both
 * axes logarithmic ({@link LogLogChart}: {@code dedup} solid, the shell's tools dashed).
 *
 * <p>A point is the median of the size's runs that ended well; a size where none did (awk out of
 * memory, or past its time budget) is drawn at the longest of its runs and marked with a cross: the
 * figure is a lower bound. Where the CSV holds the same contender, size and round more than once,
 * the later line wins, so a size can be measured again and redrawn.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.CommandScaleChart [--out=docs/cli-scale.png] scale.csv...}; the chart
 * of peak RSS goes beside it ({@code docs/cli-scale-rss.png}).
 */
public final class CommandScaleChart {

    /** The status of a run that ended well. */
    static final String OK = "ok";

    /** The CSV's header, as {@code scale.sh} writes it. */
    static final String HEADER =
            "lines,distinct,contender,round,wall_s,peak_rss_kib,lines_out,status";

    private static final Map<String, Color> COLORS =
            Map.of(
                    "dedup", new Color(0x1f, 0x77, 0xb4),
                    "sort-u", new Color(0xd6, 0x27, 0x28),
                    "awk", new Color(0xff, 0x7f, 0x0e));

    private static final Map<String, String> NAMES =
            Map.of(
                    "dedup", "dedup",
                    "sort-u", "LC_ALL=C sort -u",
                    "awk", "LC_ALL=C awk '!s[$0]++'");

    /**
     * One run of one contender.
     *
     * @param lines the lines of the input
     * @param contender dedup, sort-u or awk
     * @param round the round, from 1
     * @param wallSeconds wall time
     * @param peakRssKib peak resident memory (GNU time's %M)
     * @param status {@value #OK}, timeout or out-of-memory
     */
    record Run(
            long lines,
            String contender,
            int round,
            double wallSeconds,
            long peakRssKib,
            String status) {

        boolean ok() {
            return status.equals(OK);
        }
    }

    /**
     * The least value drawn: GNU time gives the wall time in hundredths of a second, and a run that
     * took less (sort on a small file, awk refused its memory at once) reads 0.00, which a
     * logarithmic axis cannot show.
     */
    static final double LEAST = 0.01;

    private CommandScaleChart() {}

    public static void main(String[] args) throws IOException {
        Path out = Path.of("docs/cli-scale.png");
        List<Run> runs = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("--out=")) {
                out = Path.of(arg.substring("--out=".length()));
            } else if (arg.startsWith("--")) {
                throw new IllegalArgumentException("unknown argument " + arg);
            } else {
                runs.addAll(read(Path.of(arg)));
            }
        }
        LogLogChart.savePng(wallChart(runs), out);
        Path rss = rssPath(out);
        LogLogChart.savePng(rssChart(runs), rss);
        System.out.println("wrote " + out + " and " + rss);
    }

    /**
     * Where the chart of peak RSS goes beside {@code out}: {@code x.png} gives {@code x-rss.png}.
     */
    static Path rssPath(Path out) {
        String name = out.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String rss =
                dot < 0 ? name + "-rss" : name.substring(0, dot) + "-rss" + name.substring(dot);
        return out.resolveSibling(rss);
    }

    /** The runs of a CSV file of {@code scale.sh}. */
    static List<Run> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new IOException(csv + ": not a scale.sh CSV, its first line is not " + HEADER);
        }
        List<Run> runs = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",", -1);
            if (f.length != 8) {
                throw new IOException(csv + " line " + (i + 1) + ": 8 fields expected");
            }
            runs.add(
                    new Run(
                            Long.parseLong(f[0]),
                            f[2],
                            Integer.parseInt(f[3]),
                            Double.parseDouble(f[4]),
                            Long.parseLong(f[5]),
                            f[7]));
        }
        return runs;
    }

    /** Wall time against lines. */
    static XYChart wallChart(List<Run> runs) {
        return chart(runs, "wall time", "wall s (median of the rounds)", Run::wallSeconds);
    }

    /** Peak resident memory against lines. */
    static XYChart rssChart(List<Run> runs) {
        return chart(
                runs,
                "peak memory",
                "peak RSS MiB (median of the rounds)",
                r -> r.peakRssKib() / 1024.0);
    }

    private static XYChart chart(
            List<Run> runs, String what, String yAxis, ToDoubleFunction<Run> value) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no runs: give one or more scale.sh CSV files");
        }
        // contender -> lines -> round -> the latest run
        Map<String, Map<Long, Map<Integer, Run>>> series = new LinkedHashMap<>();
        for (Run r : runs) {
            series.computeIfAbsent(r.contender(), k -> new TreeMap<>())
                    .computeIfAbsent(r.lines(), k -> new TreeMap<>())
                    .put(r.round(), r);
        }
        XYChart chart =
                LogLogChart.create(
                        "dedup vs sort -u and awk on a file: " + what,
                        "lines (half of them distinct 16-character ids, each twice)",
                        yAxis);
        for (Map.Entry<String, Map<Long, Map<Integer, Run>>> e : series.entrySet()) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            List<Double> stoppedX = new ArrayList<>();
            List<Double> stoppedY = new ArrayList<>();
            for (Map.Entry<Long, Map<Integer, Run>> size : e.getValue().entrySet()) {
                double[] ok =
                        size.getValue().values().stream()
                                .filter(Run::ok)
                                .mapToDouble(value)
                                .toArray();
                double point;
                if (ok.length > 0) {
                    point = median(ok);
                } else {
                    point =
                            size.getValue().values().stream()
                                    .mapToDouble(value)
                                    .max()
                                    .orElseThrow();
                    stoppedX.add((double) size.getKey());
                    stoppedY.add(Math.max(LEAST, point));
                }
                x.add((double) size.getKey());
                y.add(Math.max(LEAST, point));
            }
            String contender = e.getKey();
            String name = NAMES.getOrDefault(contender, contender);
            LogLogChart.addLine(
                    chart,
                    name,
                    x,
                    y,
                    COLORS.getOrDefault(contender, Color.DARK_GRAY),
                    contender.equals("dedup") ? "heap" : "shell");
            LogLogChart.markStopped(chart, name, stoppedX, stoppedY);
        }
        return chart;
    }

    /** The median of {@code values} (the mean of the middle two of an even count). */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
