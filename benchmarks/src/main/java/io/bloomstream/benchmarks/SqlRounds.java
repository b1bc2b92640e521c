package io.bloomstream.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The rounds of {@link SqlBenchmark}: the order of the queries in each round, and the summary of
 * one backend's runs (per query the median records/s over the rounds, the min-max spread, the ratio
 * of medians to the exact query measured in the same run, and the median CPU time per row with its
 * ratio to the exact query's: "CPU vs exact" 2x means half the CPU per row).
 *
 * <p>Rounds alternate the order of the queries (as given in odd rounds, reversed in even ones), so
 * that a query is not always the one that runs after a given other, nor always first on a machine
 * whose load drifts. The median of the rounds, not their mean, is the figure: on shared cores one
 * slow round (a build of another session) moves a mean but not the median of three.
 */
final class SqlRounds {

    private SqlRounds() {}

    /**
     * One measured run: a query on a backend in a round; {@code cpuMicrosPerRow} the CPU time of
     * the whole process from the first to the last record, per record (on shared cores less
     * sensitive to other processes than records/s, which counts the time the task waited for a
     * core).
     */
    record Run(
            String backend,
            String query,
            int round,
            double recordsPerSecond,
            double cpuMicrosPerRow) {}

    /** The summary of one query's runs on one backend. */
    record Row(
            String backend,
            String query,
            int rounds,
            double median,
            double min,
            double max,
            OptionalDouble vsExact,
            OptionalDouble vsExactTtl,
            double minRoundRatio,
            double maxRoundRatio,
            double medianCpuMicrosPerRow,
            OptionalDouble cpuVsExact) {}

    /** The queries of round {@code round} (1-based): as given in odd rounds, reversed in even. */
    static List<String> order(List<String> queries, int round) {
        if (round < 1) {
            throw new IllegalArgumentException("round: must be at least 1, got " + round);
        }
        List<String> order = new ArrayList<>(queries);
        if (round % 2 == 0) {
            java.util.Collections.reverse(order);
        }
        return order;
    }

    /**
     * The exact query a query is compared with: {@code count_distinct_updating} (the queries on
     * updating input, {@code *_updating}), {@code row_number_et} (the queries by event time, {@code
     * *_et}), {@code count_distinct} or {@code row_number}.
     */
    static String baseline(String query) {
        if (SqlQueries.isUpdating(query)) {
            return "count_distinct_updating";
        }
        if (SqlQueries.isEventTime(query)) {
            return "row_number" + SqlQueries.EVENT_TIME;
        }
        return query.contains("count") ? "count_distinct" : "row_number";
    }

    /** The median of {@code values} (the mean of the middle two for an even count). */
    static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("values: none");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /**
     * Per query of {@code backend}, in the order first run: median, spread, the ratio of its median
     * to the median of {@link #baseline} and of the baseline with {@code _ttl} (empty when that
     * query was not run), and the range of the per-round ratios to the baseline (the ratio of the
     * two runs of the same round, which shared the machine's load most closely).
     */
    static List<Row> summarize(List<Run> runs, String backend) {
        Map<String, List<Run>> byQuery = new LinkedHashMap<>();
        for (Run r : runs) {
            if (r.backend().equals(backend)) {
                byQuery.computeIfAbsent(r.query(), q -> new ArrayList<>()).add(r);
            }
        }
        List<Row> rows = new ArrayList<>();
        for (Map.Entry<String, List<Run>> e : byQuery.entrySet()) {
            String query = e.getKey();
            double[] rates = rates(e.getValue());
            double cpu = median(cpu(e.getValue()));
            double median = median(rates);
            String exact = baseline(query);
            OptionalDouble vsExact = ratio(median, byQuery.get(exact));
            OptionalDouble vsTtl =
                    query.equals(exact + "_ttl")
                            ? OptionalDouble.empty()
                            : ratio(median, byQuery.get(exact + "_ttl"));
            double minRatio = Double.NaN;
            double maxRatio = Double.NaN;
            List<Run> exactRuns = byQuery.get(exact);
            if (exactRuns != null) {
                for (Run r : e.getValue()) {
                    for (Run x : exactRuns) {
                        if (x.round() == r.round()) {
                            double q = r.recordsPerSecond() / x.recordsPerSecond();
                            minRatio = Double.isNaN(minRatio) ? q : Math.min(minRatio, q);
                            maxRatio = Double.isNaN(maxRatio) ? q : Math.max(maxRatio, q);
                        }
                    }
                }
            }
            rows.add(
                    new Row(
                            backend,
                            query,
                            rates.length,
                            median,
                            Arrays.stream(rates).min().orElseThrow(),
                            Arrays.stream(rates).max().orElseThrow(),
                            vsExact,
                            vsTtl,
                            minRatio,
                            maxRatio,
                            cpu,
                            exactRuns == null
                                    ? OptionalDouble.empty()
                                    : OptionalDouble.of(median(cpu(exactRuns)) / cpu)));
        }
        return rows;
    }

    /** The Markdown table of {@code rows}. */
    static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                "| backend | query | rounds | median records/s | min - max | vs row_number (or"
                        + " count_distinct) | vs the same with TTL | per-round ratio, min - max"
                        + " | median CPU us/row | CPU vs exact |\n");
        sb.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (Row r : rows) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %d | %,.0f | %,.0f - %,.0f | %s | %s | %s | %.2f | %s |%n",
                            r.backend(),
                            r.query(),
                            r.rounds(),
                            r.median(),
                            r.min(),
                            r.max(),
                            format(r.vsExact()),
                            format(r.vsExactTtl()),
                            Double.isNaN(r.minRoundRatio())
                                    ? "-"
                                    : String.format(
                                            Locale.ROOT,
                                            "%.2fx - %.2fx",
                                            r.minRoundRatio(),
                                            r.maxRoundRatio()),
                            r.medianCpuMicrosPerRow(),
                            format(r.cpuVsExact())));
        }
        return sb.toString();
    }

    private static String format(OptionalDouble ratio) {
        return ratio.isPresent() ? String.format(Locale.ROOT, "%.2fx", ratio.getAsDouble()) : "-";
    }

    private static OptionalDouble ratio(double median, List<Run> exact) {
        return exact == null
                ? OptionalDouble.empty()
                : OptionalDouble.of(median / median(rates(exact)));
    }

    private static double[] cpu(List<Run> runs) {
        return runs.stream().mapToDouble(Run::cpuMicrosPerRow).toArray();
    }

    private static double[] rates(List<Run> runs) {
        return runs.stream().mapToDouble(Run::recordsPerSecond).toArray();
    }
}
