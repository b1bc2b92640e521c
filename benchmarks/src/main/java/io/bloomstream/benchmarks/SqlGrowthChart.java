package io.bloomstream.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.knowm.xchart.XYChart;

/**
 * Draws how the cost of the SQL queries grows (issue 41): the median records/s of each query
 * against the distinct ids of its input, from the CSV files that {@link SqlBenchmark} appends to
 * ({@code -Dbench.csv}, {@link SqlMedians}). One line per query and backend, both axes logarithmic
 * ({@link LogLogChart}: heap solid, RocksDB dashed); points where a round stopped at its budget are
 * marked. Where several lines hold the same query, backend and distinct ids, the later one wins
 * (the later file, or further down the same file), so a size can be measured again and redrawn.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.SqlGrowthChart [--out=docs/sql-dedup-growth.png] sql-growth.csv...}.
 */
public final class SqlGrowthChart {

    /** The colour of each known query; others take {@link #OTHERS} in turn. */
    private static final Map<String, Color> COLORS =
            Map.of(
                    "row_number", new Color(0xd6, 0x27, 0x28),
                    "row_number_ttl", new Color(0xff, 0x7f, 0x0e),
                    "bloom_dedup", new Color(0x1f, 0x77, 0xb4),
                    "bloom_dedup_whole", new Color(0x2c, 0xa0, 0x2c),
                    "bloom_dedup_exact", new Color(0x94, 0x67, 0xbd));

    private static final List<Color> OTHERS =
            List.of(
                    new Color(0x8c, 0x56, 0x4b),
                    new Color(0xe3, 0x77, 0xc2),
                    new Color(0xbc, 0xbd, 0x22),
                    new Color(0x17, 0xbe, 0xcf),
                    new Color(0x55, 0x55, 0x55));

    private SqlGrowthChart() {}

    public static void main(String[] args) throws IOException {
        Path out = Path.of("docs/sql-dedup-growth.png");
        List<SqlMedians> lines = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("--out=")) {
                out = Path.of(arg.substring("--out=".length()));
            } else if (arg.startsWith("--")) {
                throw new IllegalArgumentException("unknown argument " + arg);
            } else {
                lines.addAll(SqlMedians.read(Path.of(arg)));
            }
        }
        LogLogChart.savePng(chart(lines), out);
        System.out.println("wrote " + out);
    }

    /**
     * The chart of {@code lines}: one line series per (query, backend), in the order first seen,
     * named "query (backend)", and a series of crosses for the points stopped at their budget.
     */
    static XYChart chart(List<SqlMedians> lines) {
        if (lines.isEmpty()) {
            throw new IllegalArgumentException("no runs: give one or more SqlBenchmark CSV files");
        }
        // (query, backend) -> distinct ids -> the latest line
        Map<String, Map<Long, SqlMedians>> series = new LinkedHashMap<>();
        Set<String> queries = new LinkedHashSet<>();
        for (SqlMedians m : lines) {
            series.computeIfAbsent(name(m), k -> new TreeMap<>()).put(m.ids(), m);
            queries.add(m.query());
        }
        XYChart chart =
                LogLogChart.create(
                        title(queries),
                        "distinct STRING ids (parallelism 1, Bloom fpp 1%)",
                        "records/s (median of the rounds)");
        Map<String, Color> colors = colors(queries);
        for (Map.Entry<String, Map<Long, SqlMedians>> e : series.entrySet()) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            List<Double> stoppedX = new ArrayList<>();
            List<Double> stoppedY = new ArrayList<>();
            for (SqlMedians m : e.getValue().values()) {
                x.add((double) m.ids());
                y.add(m.median());
                if (m.stoppedAtBudget()) {
                    stoppedX.add((double) m.ids());
                    stoppedY.add(m.median());
                }
            }
            SqlMedians first = e.getValue().values().iterator().next();
            LogLogChart.addLine(
                    chart, e.getKey(), x, y, colors.get(first.query()), first.backend());
            LogLogChart.markStopped(chart, e.getKey(), stoppedX, stoppedY);
        }
        return chart;
    }

    /** The longest title that fits over the plot beside the legend (in characters). */
    static final int MAX_TITLE = 64;

    /** The name of the series of {@code m}: "query (backend)". */
    static String name(SqlMedians m) {
        return m.query() + " (" + m.backend() + ")";
    }

    /**
     * The title, naming the contenders: the Bloom queries against the exact ones ({@code
     * row_number*}, {@code count_distinct*}), e.g. "bloom_dedup, bloom_dedup_whole vs row_number,
     * row_number_ttl" (short: XChart centres it over the plot, with the legend beside it).
     */
    static String title(Set<String> queries) {
        List<String> bloom = new ArrayList<>();
        List<String> exact = new ArrayList<>();
        for (String q : queries) {
            (q.startsWith("row_number") || q.startsWith("count_distinct") ? exact : bloom).add(q);
        }
        if (bloom.isEmpty() || exact.isEmpty()) {
            return String.join(", ", queries);
        }
        String title = String.join(", ", bloom) + " vs " + String.join(", ", exact);
        // a longer title runs off the plot: the legend names the queries
        return title.length() <= MAX_TITLE
                ? title
                : bloom.size() + " Bloom queries vs " + String.join(", ", exact);
    }

    private static Map<String, Color> colors(Set<String> queries) {
        Map<String, Color> colors = new LinkedHashMap<>();
        int next = 0;
        for (String q : queries) {
            Color c = COLORS.get(q);
            colors.put(q, c != null ? c : OTHERS.get(next++ % OTHERS.size()));
        }
        return colors;
    }
}
