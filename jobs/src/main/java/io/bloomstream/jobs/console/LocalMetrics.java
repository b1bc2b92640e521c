package io.bloomstream.jobs.console;

import io.bloomstream.flink.dedup.DedupMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A metric reporter of the embedded mini-cluster that keeps, per dedup operator and subtask, the
 * filter metrics of {@link DedupMetrics} over the whole run, for the health lines of the summary.
 * The "worst since the last read" gauges are sampled on each progress tick and when the subtask's
 * metrics are removed (or the cluster closes), and the maximum over the samples is kept, so the
 * figures cover the whole run (a web UI reading the same gauges in between takes its samples away
 * from this one). Registered only for local runs, under the run's id.
 */
public final class LocalMetrics implements MetricReporter {

    /** The reporter's name in the configuration. */
    static final String NAME = "bloomstream";

    private static final String RUN_ID = "run-id";

    private static final Map<String, LocalMetrics> RUNS = new ConcurrentHashMap<>();

    private final String runId;
    private final Map<String, Subtask> subtasks = new HashMap<>();
    private final CountDownLatch closed = new CountDownLatch(1);

    private LocalMetrics(String runId) {
        this.runId = runId;
    }

    /** The configuration that registers the reporter of run {@code runId}. */
    public static Configuration configuration(String runId) {
        Configuration conf = new Configuration();
        conf.setString("metrics.reporter." + NAME + ".factory.class", Factory.class.getName());
        conf.setString("metrics.reporter." + NAME + "." + RUN_ID, runId);
        return conf;
    }

    /** The reporter of run {@code runId}, once the cluster has created it; else null. */
    public static LocalMetrics of(String runId) {
        return RUNS.get(runId);
    }

    /** Forgets run {@code runId}. */
    public static void remove(String runId) {
        RUNS.remove(runId);
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {
        sample(true);
        closed.countDown();
    }

    /** Waits until the cluster closed the reporter (its last sample is then taken). */
    public boolean awaitClosed(long timeout, TimeUnit unit) throws InterruptedException {
        return closed.await(timeout, unit);
    }

    @Override
    public synchronized void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        if (!Subtask.NAMES.contains(name)) {
            return;
        }
        Map<String, String> vars = group.getAllVariables();
        String operator = vars.getOrDefault("<operator_name>", "?");
        String key = operator + "/" + vars.getOrDefault("<subtask_index>", "?");
        subtasks.computeIfAbsent(key, k -> new Subtask(operator)).metrics.put(name, metric);
    }

    @Override
    public synchronized void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        if (!Subtask.NAMES.contains(name)) {
            return;
        }
        Map<String, String> vars = group.getAllVariables();
        Subtask s =
                subtasks.get(
                        vars.getOrDefault("<operator_name>", "?")
                                + "/"
                                + vars.getOrDefault("<subtask_index>", "?"));
        if (s != null && !s.closed) {
            s.sample(); // the first removal: every gauge of the subtask is still readable
            s.closed = true;
        }
    }

    /** Samples the gauges of every open subtask (and closes them all if {@code last}). */
    public synchronized void sample(boolean last) {
        for (Subtask s : subtasks.values()) {
            if (!s.closed) {
                s.sample();
                s.closed = last;
            }
        }
    }

    /** The figures of each dedup operator, summed or maximized over its subtasks. */
    public synchronized List<DedupFigures> dedupOperators() {
        Map<String, DedupFigures> byOperator = new HashMap<>();
        for (Subtask s : subtasks.values()) {
            DedupFigures f = byOperator.computeIfAbsent(s.operator, o -> new DedupFigures(o));
            f.worstFill = Math.max(f.worstFill, s.worstFill);
            f.worstFpp = Math.max(f.worstFpp, s.worstFpp);
            f.stages = Math.max(f.stages, s.stages);
            f.pages += s.pages;
            f.passed += s.passed;
            f.recordsIn += s.recordsIn;
            f.overCapacity += s.overCapacity;
            f.exactEntries += s.exactEntries;
            f.exactBytes += s.exactBytes;
            f.exactReads += s.exactReads;
            f.falsePositivesCaught += s.falsePositivesCaught;
        }
        List<DedupFigures> list = new ArrayList<>(byOperator.values());
        list.sort(java.util.Comparator.comparing(d -> d.operator));
        return list;
    }

    /** The run's figures of one dedup operator. */
    public static final class DedupFigures {
        /** The operator's name. */
        public final String operator;

        /** The highest expected fill ratio of a filter stage. */
        public double worstFill;

        /** The highest estimated false-positive rate of a filter stage. */
        public double worstFpp;

        /** The most cascade stages of a key. */
        public int stages;

        /** Pages held at the end (the peak of each subtask, summed). */
        public long pages;

        /** First occurrences passed. */
        public long passed;

        /** Events in. */
        public long recordsIn;

        /** Fixed filters that passed their capacity. */
        public long overCapacity;

        /** Exact mode: the exact entries held (the peak of each subtask, summed). */
        public long exactEntries;

        /** Exact mode: their estimated bytes (the peak of each subtask, summed). */
        public long exactBytes;

        /** Exact mode: reads of the exact entries (every duplicate, every false positive). */
        public long exactReads;

        /** Exact mode: the filters' false positives that the exact entries caught. */
        public long falsePositivesCaught;

        DedupFigures(String operator) {
            this.operator = operator;
        }
    }

    /** The metrics of one subtask and the extremes seen so far. */
    private static final class Subtask {
        static final java.util.Set<String> NAMES =
                java.util.Set.of(
                        DedupMetrics.WORST_FILL_RATIO,
                        DedupMetrics.ESTIMATED_FPP,
                        DedupMetrics.CASCADE_STAGES,
                        DedupMetrics.ALLOCATED_PAGES,
                        DedupMetrics.PASSED,
                        DedupMetrics.RECORDS_IN,
                        DedupMetrics.OVER_CAPACITY,
                        DedupMetrics.EXACT_ENTRIES,
                        DedupMetrics.EXACT_BYTES,
                        DedupMetrics.EXACT_READS,
                        DedupMetrics.FALSE_POSITIVES_CAUGHT);

        final String operator;
        final Map<String, Metric> metrics = new HashMap<>();
        boolean closed;
        double worstFill;
        double worstFpp;
        int stages;
        long pages;
        long passed;
        long recordsIn;
        long overCapacity;
        long exactEntries;
        long exactBytes;
        long exactReads;
        long falsePositivesCaught;

        Subtask(String operator) {
            this.operator = operator;
        }

        /** Reads the fill before the rate: reading the rate starts a new "since the last read". */
        void sample() {
            worstFill = Math.max(worstFill, number(DedupMetrics.WORST_FILL_RATIO));
            worstFpp = Math.max(worstFpp, number(DedupMetrics.ESTIMATED_FPP));
            stages = Math.max(stages, (int) number(DedupMetrics.CASCADE_STAGES));
            pages = Math.max(pages, (long) number(DedupMetrics.ALLOCATED_PAGES));
            passed = (long) number(DedupMetrics.PASSED);
            recordsIn = (long) number(DedupMetrics.RECORDS_IN);
            overCapacity = (long) number(DedupMetrics.OVER_CAPACITY);
            long entries = (long) number(DedupMetrics.EXACT_ENTRIES);
            if (entries >= exactEntries) { // the peak, and the bytes of the same sample
                exactEntries = entries;
                exactBytes = (long) number(DedupMetrics.EXACT_BYTES);
            }
            exactReads = (long) number(DedupMetrics.EXACT_READS);
            falsePositivesCaught = (long) number(DedupMetrics.FALSE_POSITIVES_CAUGHT);
        }

        private double number(String name) {
            Metric m = metrics.get(name);
            if (m instanceof Counter) {
                return ((Counter) m).getCount();
            }
            if (m instanceof Gauge) {
                Object v = ((Gauge<?>) m).getValue();
                return v instanceof Number ? ((Number) v).doubleValue() : 0;
            }
            return 0;
        }
    }

    /** Creates the reporter of a run, from the run id in its configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            String runId = properties.getProperty(RUN_ID);
            LocalMetrics reporter = new LocalMetrics(runId);
            if (runId != null) {
                RUNS.put(runId, reporter);
            }
            return reporter;
        }
    }
}
