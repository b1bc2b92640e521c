package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Sizing;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The metrics of Bloom filter operators, registered in the operator's metric group. Gauges named
 * "worst" report the maximum over the keys touched since the previous read.
 */
@PublicEvolving
public final class DedupMetrics implements io.bloomstream.flink.state.FilterMetrics {

    /** Counter: events in. */
    public static final String RECORDS_IN = "bloomRecordsIn";

    /** Counter: first occurrences passed on. */
    public static final String PASSED = "bloomPassed";

    /** Counter: duplicates dropped (or sent to the duplicates side output). */
    public static final String DUPLICATES = "bloomDuplicates";

    /** Counter: events without a usable id or timestamp, sent to the rejected side output. */
    public static final String REJECTED = "bloomRejected";

    /**
     * Counter: event-time events that arrived later than the allowed lateness behind the watermark,
     * sent to the late side output without being judged.
     */
    public static final String LATE = "bloomLate";

    /**
     * Counter: generations widened to take a bucket of another because the key had no free slot
     * (ids in them are then remembered longer than the retention); see docs/dedup.md.
     */
    public static final String WIDENED_GENERATIONS = "bloomWidenedGenerations";

    /** Gauge: the expected fill ratio of the fullest stage touched since the last read. */
    public static final String WORST_FILL_RATIO = "bloomWorstFillRatio";

    /**
     * Gauge: the estimated false-positive rate of the fullest stage touched since the last read, at
     * its items under its layout's model ({@code FilterSpec.expectedFpp}: the paged model for paged
     * stages, (1 - e^(-kn/m))^k for classic ones).
     */
    public static final String ESTIMATED_FPP = "bloomEstimatedFpp";

    /** Gauge: the most cascade stages of a key since the last read. */
    public static final String CASCADE_STAGES = "bloomCascadeStages";

    /**
     * Gauge: the pages held by the keys this subtask has read or written since it started: a key's
     * pages are added when it creates them or, for a restored key, when it is first read (its next
     * event or timer), and subtracted when they are freed; never negative.
     */
    public static final String ALLOCATED_PAGES = "bloomAllocatedPages";

    /** Counter: filters that went past their capacity (fixed growth only). */
    public static final String OVER_CAPACITY = "bloomOverCapacity";

    /**
     * Counter, exact mode: reads of the exact entries, one per generation whose filter answered
     * "maybe" (every duplicate, and every false positive of a filter).
     */
    public static final String EXACT_READS = "bloomExactReads";

    /**
     * Counter, exact mode: filter false positives that the exact entries caught, each a first
     * occurrence that the filter alone would have dropped (or a look past a generation that does
     * not hold the id).
     */
    public static final String FALSE_POSITIVES_CAUGHT = "bloomFalsePositivesCaught";

    /**
     * Gauge, exact mode: the exact entries (ids) held by the keys this subtask has read or written
     * since it started, counted as {@link #ALLOCATED_PAGES} counts pages: added as ids are added, a
     * restored key's (its filters' items) when it is first read, subtracted when their generation
     * or key is dropped. The filters' pages are the smaller part of exact mode's state: these are
     * the ids themselves.
     */
    public static final String EXACT_ENTRIES = "bloomExactEntries";

    /**
     * Gauge, exact mode: the estimated bytes of the exact entries held: {@link #EXACT_ENTRIES}
     * times the mean estimated size of the entries this subtask wrote (each sized from its layout
     * when written: {@code io.bloomstream.flink.state.ExactEntrySize}, on the heap backend its
     * objects, on RocksDB its serialized key and value); until it writes one, {@code
     * ExactEntrySize.MIN} an entry (a lower bound). See docs/metrics.md.
     */
    public static final String EXACT_BYTES = "bloomExactBytes";

    public final Counter recordsIn;
    public final Counter passed;
    public final Counter duplicates;
    public final Counter rejected;
    public final Counter late;
    public final Counter widenedGenerations;
    public final Counter overCapacity;
    public final Counter exactReads;
    public final Counter falsePositivesCaught;
    // The fullest stage since the last read, by load n/m; fill and rate are computed on read,
    // so the per-event cost is a comparison.
    // Volatile so that the per-record check in observe reads them without the lock; written under
    // the lock only (by observe, and by the gauges' resets).
    private volatile double worstLoad = -1;
    private int worstHashes;
    private long worstItems;
    private long worstBits;
    private int worstPageBits;
    private volatile int maxStages;
    private volatile long allocatedPages;
    private volatile long exactEntries;
    // Written by the task thread only: the entries it wrote and their estimated bytes.
    private volatile long entriesWritten;
    private volatile long entryBytesWritten;

    public DedupMetrics(MetricGroup group) {
        recordsIn = group.counter(RECORDS_IN);
        passed = group.counter(PASSED);
        duplicates = group.counter(DUPLICATES);
        rejected = group.counter(REJECTED);
        late = group.counter(LATE);
        widenedGenerations = group.counter(WIDENED_GENERATIONS);
        overCapacity = group.counter(OVER_CAPACITY);
        exactReads = group.counter(EXACT_READS);
        falsePositivesCaught = group.counter(FALSE_POSITIVES_CAUGHT);
        group.gauge(WORST_FILL_RATIO, (Gauge<Double>) this::worstFill);
        group.gauge(ESTIMATED_FPP, (Gauge<Double>) this::takeWorstFpp);
        group.gauge(CASCADE_STAGES, (Gauge<Integer>) this::takeMaxStages);
        group.gauge(ALLOCATED_PAGES, (Gauge<Long>) () -> allocatedPages);
        group.gauge(EXACT_ENTRIES, (Gauge<Long>) () -> exactEntries);
        group.gauge(EXACT_BYTES, (Gauge<Long>) this::exactBytes);
    }

    /**
     * Notes a classic stage of {@code bits} bits and {@code hashes} hashes holding {@code items}.
     */
    public void observe(long items, long bits, int hashes, int stages) {
        observe(items, bits, hashes, FilterSpec.CLASSIC, stages);
    }

    /**
     * Notes a stage of {@code bits} bits and {@code hashes} hashes in pages of {@code pageBits}
     * ({@link FilterSpec#CLASSIC} for one) holding {@code items}.
     */
    @Override
    public void observe(long items, long bits, int hashes, int pageBits, int stages) {
        // Most records change neither figure: no lock for them (an uncontended lock still costs a
        // compare-and-swap per record).
        if ((double) items / bits > worstLoad || stages > maxStages) {
            update(items, bits, hashes, pageBits, stages);
        }
    }

    private synchronized void update(long items, long bits, int hashes, int pageBits, int stages) {
        double load = (double) items / bits;
        if (load > worstLoad) {
            worstLoad = load;
            worstHashes = hashes;
            worstItems = items;
            worstBits = bits;
            worstPageBits = pageBits;
        }
        if (stages > maxStages) {
            maxStages = stages;
        }
    }

    private synchronized double worstFill() {
        return worstLoad < 0 ? 0 : expectedFill(worstItems, worstBits, worstHashes);
    }

    /**
     * The fill a stage of {@code bits} bits and {@code hashes} hashes is expected to have with
     * {@code items} items, 1 - e^(-kn/m): the figure of {@value #WORST_FILL_RATIO} (and of {@code
     * BloomInspect}, so that the two agree).
     */
    public static double expectedFill(long items, long bits, int hashes) {
        return -Math.expm1(-hashes * ((double) items / bits));
    }

    /**
     * The false-positive rate of a stage with {@code items} items: (1 - e^(-kn/m))^k for the
     * classic layout ({@code pageBits} {@link FilterSpec#CLASSIC}), else the paged layout's rate
     * ({@link Sizing#pagedFalsePositiveRate}); the figure of {@value #ESTIMATED_FPP}.
     */
    public static double expectedFpp(long items, long bits, int hashes, int pageBits) {
        return pageBits == FilterSpec.CLASSIC
                ? Math.pow(expectedFill(items, bits, hashes), hashes)
                : Sizing.pagedFalsePositiveRate(bits, hashes, items, pageBits);
    }

    private synchronized double takeWorstFpp() {
        double v;
        if (worstLoad < 0) {
            v = 0;
        } else {
            v = expectedFpp(worstItems, worstBits, worstHashes, worstPageBits);
        }
        worstLoad = -1;
        return v;
    }

    private synchronized int takeMaxStages() {
        int v = maxStages;
        maxStages = 0;
        return v;
    }

    @Override
    public void generationWidened() {
        widenedGenerations.inc();
    }

    @Override
    public void overCapacity() {
        overCapacity.inc();
    }

    @Override
    public void exactRead(boolean found) {
        exactReads.inc();
        if (!found) {
            falsePositivesCaught.inc();
        }
    }

    /** Called by the task thread only (the gauge reads from the reporter's thread). */
    @Override
    public void pagesAllocated(long delta) {
        allocatedPages += delta;
    }

    long allocatedPages() {
        return allocatedPages;
    }

    /** Called by the task thread only (the gauge reads from the reporter's thread). */
    @Override
    public void exactEntries(long delta) {
        exactEntries = Math.max(0, exactEntries + delta);
    }

    /**
     * An exact entry of an estimated {@code bytes} was written (by the task thread only): sizes
     * {@link #EXACT_BYTES}.
     */
    public void exactEntryWritten(long bytes) {
        entryBytesWritten += bytes;
        entriesWritten++;
    }

    /** The estimated bytes of the exact entries held (see {@link #EXACT_BYTES}). */
    long exactBytes() {
        long entries = exactEntries;
        long written = entriesWritten;
        long bytes = entryBytesWritten;
        if (written == 0) {
            return entries * io.bloomstream.flink.state.ExactEntrySize.MIN;
        }
        return Math.round(entries * ((double) bytes / written));
    }
}
