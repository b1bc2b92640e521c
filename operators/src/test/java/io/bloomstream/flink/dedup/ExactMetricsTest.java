package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.ExactDedupTest.exactEntries;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.state.ExactEntrySize;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.time.Duration;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for the exact mode metrics of {@link DedupMetrics}: the exact entries gauge equals the
 * entries the keyed state holds, as ids are added, as generations expire and after a restore, and
 * the bytes gauge prices them at the estimated size of the entries written.
 */
class ExactMetricsTest {

    /** Per key, 100 ids at 1%, exact, remembered for 10 s of event time in 2 generations. */
    private static DedupConfig config() {
        return DedupConfig.builder()
                .expectedItems(100)
                .fpp(0.01)
                .exact(true)
                .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME)
                .build();
    }

    /**
     * The estimated bytes of an entry of a 5-character id under key "a": on the heap its objects
     * (64 + an array of 16 + 5 bytes, rounded up to 24), on RocksDB its bytes (a 1-byte key-group
     * prefix, "a" in 2 bytes, 16 of slot, value and RocksDB's own, and the id in 6).
     */
    private static long entryBytes(Backend backend) {
        return backend == Backend.HEAP ? 88 : 25;
    }

    private static void process(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            String event,
            long timestamp)
            throws Exception {
        h.processElement(event, timestamp);
        DedupHarness.judge(h);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theGaugesCountTheEntriesInStateAndTheirBytes(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = DedupHarness.create(config(), backend, m)) {
            h.open();
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isZero();
            for (int i = 0; i < 50; i++) {
                process(h, String.format("a,old%02d", i), 1_000);
                process(h, String.format("a,new%02d", i), 36_000);
            }
            process(h, "a,new07", 36_000); // a duplicate adds no entry
            assertThat(exactEntries(h)).isEqualTo(100);
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isEqualTo(100);
            assertThat(m.number(DedupMetrics.EXACT_BYTES)).isEqualTo(100 * entryBytes(backend));
            h.processWatermark(35_000); // the generation of 1 s expires
            assertThat(exactEntries(h)).isEqualTo(50);
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isEqualTo(50);
            assertThat(m.number(DedupMetrics.EXACT_BYTES)).isEqualTo(50 * entryBytes(backend));
            snapshot = h.snapshot(1, 1);
        }
        try (HarnessMetrics m = new HarnessMetrics();
                var h = DedupHarness.create(config(), backend, m)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).as("before the key is read").isZero();
            process(h, "a,new07", 36_000); // the restored key is read: its entries are counted
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isEqualTo(50);
            assertThat(m.number(DedupMetrics.EXACT_BYTES))
                    .as("no entry written yet: the lower bound")
                    .isEqualTo(50 * ExactEntrySize.MIN);
            process(h, "a,new50", 36_000);
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isEqualTo(51);
            assertThat(m.number(DedupMetrics.EXACT_BYTES)).isEqualTo(51 * entryBytes(backend));
            h.processWatermark(100_000);
            assertThat(exactEntries(h)).isZero();
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isZero();
            assertThat(m.number(DedupMetrics.EXACT_BYTES)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void withoutExactModeTheGaugesStayZero(Backend backend) throws Exception {
        DedupConfig config = DedupConfig.builder().expectedItems(100).fpp(0.01).build();
        try (HarnessMetrics m = new HarnessMetrics();
                var h = DedupHarness.create(config, backend, m)) {
            h.open();
            for (int i = 0; i < 20; i++) {
                process(h, "a," + i, 1_000);
            }
            assertThat(m.number(DedupMetrics.EXACT_ENTRIES)).isZero();
            assertThat(m.number(DedupMetrics.EXACT_BYTES)).isZero();
        }
    }
}
