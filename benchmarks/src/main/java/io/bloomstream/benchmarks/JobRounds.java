package io.bloomstream.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The summary of a {@link JobBenchmark} of several rounds: per cell (distinct ids, parallelism) and
 * contender (backend and pipeline), the median records/s over the rounds with its min-max spread,
 * the median state bytes per distinct id, and the ratio of its median to the median of every exact
 * contender ({@code exact} pipelines, on any backend) and of the pass-through on its own backend,
 * all measured in the same run.
 */
final class JobRounds {

    private JobRounds() {}

    static String summary(List<JobRun> runs, List<Integer> roundOf) {
        Map<String, List<JobRun>> byCell = new LinkedHashMap<>();
        for (JobRun r : runs) {
            byCell.computeIfAbsent(
                            r.distinctIds() + " ids, p" + r.parallelism(), c -> new ArrayList<>())
                    .add(r);
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<JobRun>> cell : byCell.entrySet()) {
            Map<String, List<JobRun>> byContender = new LinkedHashMap<>();
            for (JobRun r : cell.getValue()) {
                byContender
                        .computeIfAbsent(r.backend() + " " + r.pipeline(), c -> new ArrayList<>())
                        .add(r);
            }
            Map<String, Double> medians = new LinkedHashMap<>();
            byContender.forEach(
                    (c, rs) ->
                            medians.put(
                                    c,
                                    SqlRounds.median(
                                            rs.stream()
                                                    .mapToDouble(JobRun::recordsPerSecond)
                                                    .toArray())));
            List<String> exacts = new ArrayList<>();
            for (String c : medians.keySet()) {
                if (c.split(" ")[1].startsWith(JobPipelines.EXACT)) {
                    exacts.add(c);
                }
            }
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%n### Medians over the rounds: %s%n%n| contender | rounds | median"
                                    + " records/s | min-max | state bytes/id | vs pass-through |",
                            cell.getKey()));
            for (String x : exacts) {
                out.append(" vs ").append(x).append(" |");
            }
            out.append("\n|---|---|---|---|---|---|");
            out.append("---|".repeat(exacts.size())).append('\n');
            for (Map.Entry<String, List<JobRun>> e : byContender.entrySet()) {
                String c = e.getKey();
                List<JobRun> rs = e.getValue();
                double[] rates = rs.stream().mapToDouble(JobRun::recordsPerSecond).toArray();
                double[] state = rs.stream().mapToDouble(JobRun::stateBytesPerDistinctId).toArray();
                String pass = c.split(" ")[0] + " " + passThroughOf(c.split(" ")[1]);
                out.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %d | %,.0f | %,.0f-%,.0f | %.3f | %s |",
                                c,
                                rs.size(),
                                medians.get(c),
                                java.util.Arrays.stream(rates).min().orElseThrow(),
                                java.util.Arrays.stream(rates).max().orElseThrow(),
                                state.length == 0 ? Double.NaN : SqlRounds.median(state),
                                ratio(medians.get(c), medians.get(pass))));
                for (String x : exacts) {
                    out.append(' ').append(ratio(medians.get(c), medians.get(x))).append(" |");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    private static String passThroughOf(String pipeline) {
        return pipeline.endsWith(JobPipelines.STRING_IDS)
                ? JobPipelines.PASS_THROUGH + JobPipelines.STRING_IDS
                : JobPipelines.PASS_THROUGH;
    }

    private static String ratio(double a, Double b) {
        return b == null ? "" : String.format(Locale.ROOT, "%.2fx", a / b);
    }
}
