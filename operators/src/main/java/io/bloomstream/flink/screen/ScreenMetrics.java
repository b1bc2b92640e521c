package io.bloomstream.flink.screen;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/** The metrics of a screen ({@link BloomScreen}), registered in the operator's metric group. */
@PublicEvolving
public final class ScreenMetrics {

    /** Counter: events screened. */
    public static final String SCREENED = "bloomScreened";

    /** Counter: events flagged (sent to the flagged side output). */
    public static final String FLAGGED = "bloomFlagged";

    /** Counter: events with a screened field missing or unusable (sent to the rejected output). */
    public static final String REJECTED = "bloomScreenRejected";

    /** Gauge: the version of the filter file in force. */
    public static final String FILTER_VERSION = "bloomFilterVersion";

    /** Gauge: the size of the filter file in force, in bytes. */
    public static final String FILTER_BYTES = "bloomFilterBytes";

    /** Gauge: the expected false-positive rate of the filter in force at its item count. */
    public static final String EXPECTED_FPP = "bloomFilterExpectedFpp";

    /** Gauge: entries added or removed live since the file in force was loaded. */
    public static final String OVERLAY_ENTRIES = "bloomScreenOverlayEntries";

    /** Counter: filter versions that could not be loaded (the previous one stayed in force). */
    public static final String LOAD_ERRORS = "bloomFilterLoadErrors";

    /** Counter: commands ignored (unusable entry, stale version). */
    public static final String COMMAND_ERRORS = "bloomScreenCommandErrors";

    /**
     * Gauge: the sequence number of the last command this task processed (applied or ignored); the
     * same in every task of a screen once they have processed the same commands.
     */
    public static final String COMMAND_SEQUENCE = "bloomScreenCommandSequence";

    final Counter screened;
    final Counter flagged;
    final Counter rejected;
    final Counter loadErrors;
    final Counter commandErrors;
    private volatile ScreenFilterLoader.Loaded current;
    private volatile int overlayEntries;
    private volatile long commandSequence;

    ScreenMetrics(MetricGroup group) {
        screened = group.counter(SCREENED);
        flagged = group.counter(FLAGGED);
        rejected = group.counter(REJECTED);
        loadErrors = group.counter(LOAD_ERRORS);
        commandErrors = group.counter(COMMAND_ERRORS);
        group.gauge(FILTER_VERSION, (Gauge<Long>) () -> current == null ? -1 : current.version());
        group.gauge(FILTER_BYTES, (Gauge<Long>) () -> current == null ? 0 : current.bytes());
        group.gauge(
                EXPECTED_FPP,
                (Gauge<Double>) () -> current == null ? 0 : current.filter().expectedFpp());
        group.gauge(OVERLAY_ENTRIES, (Gauge<Integer>) () -> overlayEntries);
        group.gauge(COMMAND_SEQUENCE, (Gauge<Long>) () -> commandSequence);
    }

    void filterInForce(ScreenFilterLoader.Loaded loaded) {
        current = loaded;
    }

    void commandSequence(long sequence) {
        commandSequence = sequence;
    }

    void overlayEntries(int n) {
        overlayEntries = n;
    }
}
