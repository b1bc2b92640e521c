package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.state.KeyCache;
import io.bloomstream.testing.Backend;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link KeyCache} through {@link DedupOperator}: the budget holds, evicted keys are
 * written back, and a snapshot holds every change whatever was cached.
 */
class KeyCacheTest {

    private static final int KEYS = 300;
    private static final int IDS = 20;

    private static DedupConfig config(long cacheBytes) {
        return DedupConfig.builder().expectedItems(100).fpp(0.01).cacheBytes(cacheBytes).build();
    }

    private static KeyCache cache(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
        return ((DedupOperator<?, ?>) h.getOperator()).cache();
    }

    /** Every key once with IDS ids, then the same events again; the last bundle judged. */
    private static void feed(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        for (int k = 0; k < KEYS; k++) {
            for (int i = 0; i < IDS; i++) {
                h.processElement("k" + k + "," + i, 0);
            }
        }
        DedupHarness.judge(h);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theBudgetHoldsAndEvictedKeysAreWrittenBack(Backend backend) throws Exception {
        long budget = 8 * 1024; // a few keys of the 300
        OperatorSubtaskState snapshot;
        try (var h = DedupHarness.create(config(budget), backend, 1, 0)) {
            h.open();
            feed(h);
            KeyCache cache = cache(h);
            assertThat(cache.size()).isLessThan(KEYS / 4);
            // one key's entry may go past the budget until the next event's trim
            assertThat(cache.bytes()).isLessThanOrEqualTo(budget + 2048);
            // 6000 first occurrences at <= 1%: 60 false drops expected, 5 sd = 39; more is a bug.
            assertThat(DedupHarness.output(h).size()).isBetween(KEYS * IDS - 100, KEYS * IDS);
            h.getOutput().clear();
            feed(h); // evicted keys are read back from state: every id is a duplicate
            assertThat(DedupHarness.output(h)).isEmpty();
            snapshot = h.snapshot(1, 1);
        }
        assertRestoredRemembersEverything(snapshot, backend);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aSnapshotHoldsWhatOnlyTheCacheHeld(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = DedupHarness.create(config(DedupConfig.DEFAULT_CACHE_BYTES), backend, 1, 0)) {
            h.open();
            feed(h);
            assertThat(cache(h).size()).isEqualTo(KEYS); // nothing was evicted
            snapshot = h.snapshot(1, 1);
        }
        assertRestoredRemembersEverything(snapshot, backend);
    }

    /** Restores with the cache off, so every answer comes from the snapshot's state. */
    private static void assertRestoredRemembersEverything(
            OperatorSubtaskState snapshot, Backend backend) throws Exception {
        try (var h = DedupHarness.create(config(0), backend, 1, 0)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(cache(h)).isNull();
            feed(h);
            List<String> passed = DedupHarness.output(h);
            assertThat(passed).isEmpty();
        }
    }
}
