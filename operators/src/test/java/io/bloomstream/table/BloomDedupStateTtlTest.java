package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests that {@code table.exec.state.ttl}, the option users set to bound the state of exact
 * queries, does not expire {@code BLOOM_DEDUP}'s state: the function pins its state hints to no
 * expiry and frees state by its own {@code retention}. Flink's state TTL runs on processing time;
 * the harness sets the clock that the state backends' TTL reads ({@code
 * setStateTtlProcessingTime}), so the test moves it past the TTL deterministically. The state is
 * read after a restore, by a new function instance whose read cache is empty, so every answer comes
 * from Flink state.
 */
class BloomDedupStateTtlTest {

    private static final int IDS = 1000;

    /** One second: the clock moves an hour past it. */
    private static final Map<String, String> SHORT_TTL = Map.of("table.exec.state.ttl", "1 s");

    private static final long HOUR = 3_600_000L;

    @ParameterizedTest
    @EnumSource(Backend.class)
    void idsStayDeduplicatedPastTheGlobalStateTtl(Backend backend) throws Exception {
        for (BloomDedupGoldenSnapshotTest.Case c : BloomDedupGoldenSnapshotTest.Case.values()) {
            PtfHarness.Plan plan = c.plan(SHORT_TTL);
            OperatorSubtaskState snapshot;
            try (PtfHarness h = BloomDedupGoldenSnapshotTest.harness(plan, backend)) {
                h.setStateTtlProcessingTime(0);
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(BloomDedupGoldenSnapshotTest.row(plan, i));
                }
                // 1000 new ids at fpp 1%: at most 10 expected drops; 990 allows 4.5 sigma.
                assertThat(BloomDedupGoldenSnapshotTest.returned(h))
                        .as("%s: first occurrences", c)
                        .isBetween(c.exact ? IDS : 990L, (long) IDS);
                snapshot = h.snapshot(1, 1);
            }
            try (PtfHarness h = BloomDedupGoldenSnapshotTest.harness(plan, backend)) {
                // An hour later on the TTL clock: state under a 1 s TTL would have expired.
                h.setStateTtlProcessingTime(HOUR);
                h.initializeState(snapshot);
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(BloomDedupGoldenSnapshotTest.row(plan, i));
                }
                assertThat(BloomDedupGoldenSnapshotTest.returned(h))
                        .as("%s: every id is still remembered past table.exec.state.ttl", c)
                        .isZero();
            }
        }
    }
}
