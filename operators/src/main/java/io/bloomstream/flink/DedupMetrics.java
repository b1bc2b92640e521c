package io.bloomstream.flink;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The metrics of Bloom filter operators, registered in the operator's metric group. Gauges named
 * "worst" report the maximum over the keys touched since the previous read.
 */
@PublicEvolving
public final class DedupMetrics {

    /** Counter: events in. */
    public static final String RECORDS_IN = "bloomRecordsIn";

    /** Counter: first occurrences passed on. */
    public static final String PASSED = "bloomPassed";

    /** Counter: duplicates dropped (or sent to the duplicates side output). */
    public static final String DUPLICATES = "bloomDuplicates";

    /** Counter: events without a usable id or timestamp, sent to the rejected side output. */
    public static final String REJECTED = "bloomRejected";

    /** Gauge: the highest expected fill ratio of a stage touched since the last read. */
    public static final String WORST_FILL_RATIO = "bloomWorstFillRatio";

    /** Gauge: the highest compound estimated false-positive rate of a key since the last read. */
    public static final String ESTIMATED_FPP = "bloomEstimatedFpp";

    /** Gauge: the most cascade stages of a key since the last read. */
    public static final String CASCADE_STAGES = "bloomCascadeStages";

    /** Gauge: pages created minus pages freed by this subtask since it started. */
    public static final String ALLOCATED_PAGES = "bloomAllocatedPages";

    /** Counter: filters that went past their capacity (fixed growth only). */
    public static final String OVER_CAPACITY = "bloomOverCapacity";

    final Counter recordsIn;
    final Counter passed;
    final Counter duplicates;
    final Counter rejected;
    final Counter overCapacity;
    private double worstFill;
    private double worstFpp;
    private int maxStages;
    private long allocatedPages;

    DedupMetrics(MetricGroup group) {
        recordsIn = group.counter(RECORDS_IN);
        passed = group.counter(PASSED);
        duplicates = group.counter(DUPLICATES);
        rejected = group.counter(REJECTED);
        overCapacity = group.counter(OVER_CAPACITY);
        group.gauge(WORST_FILL_RATIO, (Gauge<Double>) this::takeWorstFill);
        group.gauge(ESTIMATED_FPP, (Gauge<Double>) this::takeWorstFpp);
        group.gauge(CASCADE_STAGES, (Gauge<Integer>) this::takeMaxStages);
        group.gauge(ALLOCATED_PAGES, (Gauge<Long>) () -> allocatedPages);
    }

    void observe(double fill, double fpp, int stages) {
        worstFill = Math.max(worstFill, fill);
        worstFpp = Math.max(worstFpp, fpp);
        maxStages = Math.max(maxStages, stages);
    }

    void pagesAllocated(long delta) {
        allocatedPages += delta;
    }

    long allocatedPages() {
        return allocatedPages;
    }

    private synchronized double takeWorstFill() {
        double v = worstFill;
        worstFill = 0;
        return v;
    }

    private synchronized double takeWorstFpp() {
        double v = worstFpp;
        worstFpp = 0;
        return v;
    }

    private synchronized int takeMaxStages() {
        int v = maxStages;
        maxStages = 0;
        return v;
    }
}
