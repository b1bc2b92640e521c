package io.bloomstream.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.knowm.xchart.XYChart;

/**
 * Draws records/s against distinct ids from the CSV files of {@link JobBenchmark}: one line per
 * pipeline (pass-through, a Bloom pipeline, exact) and backend, at one parallelism, both axes
 * logarithmic. Runs stopped at their budget are drawn at their rate so far and marked; failed runs
 * are left out. Where several files hold the same run, the later file wins, so a chart can be made
 * from runs recorded separately.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.JobThroughputChart [--out=benchmarks/job-throughput.png]
 * [--parallelism=1] [--bloom=bloom-default] [--string-ids] run.csv...}: {@code --string-ids} draws
 * the string-id runs ({@code pass-through:string}, {@code bloom-default:string}, {@code
 * exact:string}) instead of the long-id ones.
 */
public final class JobThroughputChart {

    private static final Color PASS = new Color(0x55, 0x55, 0x55);
    private static final Color BLOOM = new Color(0x1f, 0x77, 0xb4);
    private static final Color EXACT = new Color(0xd6, 0x27, 0x28);

    private JobThroughputChart() {}

    public static void main(String[] args) throws IOException {
        Path out = Path.of("benchmarks/job-throughput.png");
        int parallelism = 1;
        String bloom = JobPipelines.BLOOM_DEFAULT;
        String ids = "";
        List<JobRun> runs = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("--out=")) {
                out = Path.of(arg.substring("--out=".length()));
            } else if (arg.startsWith("--parallelism=")) {
                parallelism = Integer.parseInt(arg.substring("--parallelism=".length()));
            } else if (arg.startsWith("--bloom=")) {
                bloom = arg.substring("--bloom=".length());
            } else if (arg.equals("--string-ids")) {
                ids = JobPipelines.STRING_IDS;
            } else if (arg.startsWith("--")) {
                throw new IllegalArgumentException("unknown argument " + arg);
            } else {
                runs.addAll(JobRun.read(Path.of(arg)));
            }
        }
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no runs: give one or more JobBenchmark CSV files");
        }
        XYChart chart = chart(runs, parallelism, bloom, ids);
        LogLogChart.savePng(chart, out);
        System.out.println("wrote " + out);
    }

    static XYChart chart(List<JobRun> runs, int parallelism, String bloom) {
        return chart(runs, parallelism, bloom, "");
    }

    /** The chart of the pipelines with id suffix {@code ids} ("" or {@code ":string"}). */
    static XYChart chart(List<JobRun> runs, int parallelism, String bloom, String ids) {
        double fpp = runs.get(0).fpp();
        XYChart chart =
                LogLogChart.create(
                        String.format(
                                Locale.ROOT,
                                "Dedup job throughput, p = %s%%, parallelism %d, %s ids",
                                new java.text.DecimalFormat("0.####").format(fpp * 100),
                                parallelism,
                                ids.isEmpty() ? "long" : "string"),
                        "distinct ids",
                        "records/s");
        boolean any = false;
        for (String backend : List.of("hashmap", "rocksdb")) {
            for (String pipeline :
                    List.of(
                            JobPipelines.PASS_THROUGH + ids,
                            bloom + ids,
                            JobPipelines.EXACT + ids)) {
                Map<Long, JobRun> points = new TreeMap<>();
                for (JobRun r : runs) {
                    if (r.backend().equals(backend)
                            && r.pipeline().equals(pipeline)
                            && r.parallelism() == parallelism
                            && !r.status().startsWith("failed")
                            && r.recordsDone() > 0) {
                        points.put(r.distinctIds(), r); // the later file wins
                    }
                }
                if (points.isEmpty()) {
                    continue;
                }
                any = true;
                addSeries(chart, pipeline + " (" + backend + ")", points, pipeline, backend);
            }
        }
        if (!any) {
            throw new IllegalArgumentException(
                    "no runs at parallelism " + parallelism + " of " + bloom + " or the baselines");
        }
        return chart;
    }

    private static void addSeries(
            XYChart chart, String name, Map<Long, JobRun> points, String pipeline, String backend) {
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        List<Double> stoppedX = new ArrayList<>();
        List<Double> stoppedY = new ArrayList<>();
        for (JobRun r : points.values()) {
            x.add((double) r.distinctIds());
            y.add(r.recordsPerSecond());
            if (r.status().startsWith(JobRun.STOPPED_AT_BUDGET)) {
                stoppedX.add((double) r.distinctIds());
                stoppedY.add(r.recordsPerSecond());
            }
        }
        Color color =
                pipeline.startsWith(JobPipelines.PASS_THROUGH)
                        ? PASS
                        : pipeline.startsWith(JobPipelines.EXACT) ? EXACT : BLOOM;
        LogLogChart.addLine(chart, name, x, y, color, backend);
        LogLogChart.markStopped(chart, name, stoppedX, stoppedY);
    }
}
