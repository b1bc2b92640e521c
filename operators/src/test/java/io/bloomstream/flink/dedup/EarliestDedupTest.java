package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.Shards;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link FirstBy#EVENT_TIME} in {@link DedupFunction}: the earliest event time per id
 * wins, emitted when the watermark passes it, ties to the first arrival, late events do not mark
 * their id. Events are {@code "user,action"} strings deduplicated by user (Flink's {@code PARTITION
 * BY id}), keyed by user.
 */
class EarliestDedupTest {

    /** A new builder of the tests' config (builders are mutable: one per config). */
    private static DedupConfig.Builder earliest() {
        return DedupConfig.builder()
                .expectedItems(1000)
                .fpp(0.001)
                .emitDuplicates(true)
                .firstBy(FirstBy.EVENT_TIME);
    }

    private static final IdSelector<String> USER = IdSelector.ofString(EarliestDedupTest::user);

    private static String user(String event) {
        return event.substring(0, event.indexOf(','));
    }

    static KeyedOneInputStreamOperatorTestHarness<String, String, String> harness(
            DedupConfig config, Backend backend) throws Exception {
        DedupFunction<String, String> function =
                new DedupFunction<>(
                        USER,
                        config,
                        config.expectedItems(),
                        0,
                        DedupHarness.DUPLICATES,
                        DedupHarness.REJECTED,
                        DedupHarness.LATE);
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new DedupOperator<>(function, config),
                        EarliestDedupTest::user,
                        Types.STRING,
                        DedupHarness.MAX_PARALLELISM,
                        1,
                        0);
        h.setStateBackend(backend.create());
        return h;
    }

    /** The main output as "value@timestamp". */
    static List<String> main(KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
        return h.getOutput().stream()
                .filter(o -> o instanceof StreamRecord<?>)
                .map(o -> (StreamRecord<?>) o)
                .map(r -> r.getValue() + "@" + r.getTimestamp())
                .collect(Collectors.toList());
    }

    static List<String> side(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            OutputTag<String> tag) {
        var records = h.getSideOutput(tag);
        if (records == null) {
            return List.of();
        }
        return records.stream()
                .map(r -> r.getValue() + "@" + r.getTimestamp())
                .collect(Collectors.toList());
    }

    /**
     * Flink's own example (docs of deduplication, keep first row on rowtime): of (Vas, login, 3 s),
     * (Vas, click, 1 s), (Vas, view, 5 s) only click passes, when the watermark reaches 1 s.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void flinksExampleKeepsTheEarliestEventTime(Backend backend) throws Exception {
        for (boolean exact : new boolean[] {false, true}) {
            try (var h = harness(earliest().exact(exact).build(), backend)) {
                h.open();
                h.processElement("Vas,login", 3_000);
                h.processElement("Vas,click", 1_000);
                h.processElement("Vas,view", 5_000);
                h.processWatermark(999);
                assertThat(main(h)).as("before the watermark passes 1 s").isEmpty();
                h.processWatermark(1_000);
                assertThat(main(h)).containsExactly("Vas,click@1000");
                h.processWatermark(10_000);
                assertThat(main(h)).containsExactly("Vas,click@1000");
                assertThat(side(h, DedupHarness.DUPLICATES))
                        .containsExactly("Vas,login@3000", "Vas,view@5000");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void onEqualEventTimesTheFirstArrivalWins(Backend backend) throws Exception {
        try (var h = harness(earliest().exact(false).build(), backend)) {
            h.open();
            h.processElement("Vas,b", 2_000);
            h.processElement("Vas,a", 2_000);
            h.processElement("Vas,c", 2_000);
            h.processWatermark(2_000);
            assertThat(main(h)).containsExactly("Vas,b@2000");
            assertThat(side(h, DedupHarness.DUPLICATES))
                    .containsExactly("Vas,a@2000", "Vas,c@2000");
        }
    }

    /**
     * A late event (timestamp at or before the watermark, allowed lateness 0) goes to the late
     * output and does not mark its id: the next on-time event of the id passes.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void aLateEventDoesNotMarkItsId(Backend backend) throws Exception {
        try (var h = harness(earliest().exact(false).build(), backend)) {
            h.open();
            h.processWatermark(1_000);
            h.processElement("Vas,late", 500);
            h.processElement("Vas,atWatermark", 1_000);
            h.processElement("Vas,onTime", 1_001);
            h.processWatermark(2_000);
            assertThat(side(h, DedupHarness.LATE))
                    .containsExactly("Vas,late@500", "Vas,atWatermark@1000");
            assertThat(main(h)).containsExactly("Vas,onTime@1001");
        }
    }

    /**
     * With allowed lateness, an event behind the watermark but within it waits for the next
     * watermark; an event arriving later with an earlier time than one already passed is a
     * duplicate (the first judged keeps its place).
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void withinAllowedLatenessAnEventIsJudgedAtTheNextWatermark(Backend backend) throws Exception {
        DedupConfig config = earliest().exact(true).allowedLateness(Duration.ofSeconds(1)).build();
        assertThat(config.allowedLateness()).isEqualTo(Duration.ofSeconds(1));
        try (var h = harness(config, backend)) {
            h.open();
            h.processElement("Vas,first", 2_000);
            h.processElement("Bob,first", 2_000);
            h.processWatermark(2_500);
            assertThat(main(h)).containsExactly("Vas,first@2000", "Bob,first@2000");
            h.processElement("Vas,earlier", 1_600); // within the lateness: judged, a duplicate
            h.processElement("Ann,behind", 1_800); // behind the watermark, within the lateness
            h.processElement("Ann,tooLate", 1_500); // 1500 + 1000 <= 2500: late
            h.processWatermark(2_600);
            assertThat(main(h))
                    .containsExactly("Vas,first@2000", "Bob,first@2000", "Ann,behind@1800");
            assertThat(side(h, DedupHarness.DUPLICATES)).containsExactly("Vas,earlier@1600");
            assertThat(side(h, DedupHarness.LATE)).containsExactly("Ann,tooLate@1500");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void anEventWithoutATimestampIsRejected(Backend backend) throws Exception {
        try (var h = harness(earliest().exact(false).build(), backend)) {
            h.open();
            h.processElement(new StreamRecord<>("Vas,none"));
            h.processWatermark(Long.MAX_VALUE);
            assertThat(main(h)).isEmpty();
            assertThat(side(h, DedupHarness.REJECTED)).hasSize(1);
        }
    }

    /**
     * Under a retention, the earliest event wins within it, the emit timers and the cleanup timers
     * of a key coexist (same key, same time: one timer, both done), and the watermark at the end
     * frees every key's state, waiting events included.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void underRetentionCleanupTimersCoexistAndFreeTheState(Backend backend) throws Exception {
        DedupConfig config =
                earliest()
                        .exact(true)
                        .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME)
                        .generations(2)
                        .build();
        try (var h = harness(config, backend)) {
            h.open();
            h.processElement("Vas,b", 3_000);
            h.processElement("Vas,a", 1_000);
            h.processWatermark(5_000);
            assertThat(main(h)).containsExactly("Vas,a@1000");
            h.processElement("Vas,again", 10_999); // 9.999 s after a: a duplicate
            h.processElement("Vas,later", 40_000); // 39 s after a: passes
            // the expiry of a's generation lies before 40 s: both timers fire in one watermark
            h.processWatermark(40_000);
            assertThat(main(h)).containsExactly("Vas,a@1000", "Vas,later@40000");
            assertThat(side(h, DedupHarness.DUPLICATES))
                    .containsExactly("Vas,b@3000", "Vas,again@10999");
            h.processWatermark(Long.MAX_VALUE);
            assertThat(DedupHarness.keysWithState(h)).isZero();
            assertThat(pendingKeys(h)).isZero();
            assertThat(h.numEventTimeTimers()).isZero();
        }
    }

    /** Events still waiting when a snapshot is taken restore with their timers and pass. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void waitingEventsRestoreAndPass(Backend backend) throws Exception {
        DedupConfig config = earliest().exact(false).build();
        OperatorSubtaskState snapshot;
        try (var h = harness(config, backend)) {
            h.open();
            h.processElement("Vas,login", 3_000);
            h.processElement("Vas,click", 1_000);
            h.processWatermark(500);
            h.processElement("Bob,x", 600); // judged with watermark 500, which the floor keeps
            snapshot = h.snapshot(1, 1);
        }
        try (var h = harness(config, backend)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement("Vas,view", 5_000);
            h.processElement("Vas,early", 400); // late: the watermark floor survived the restore
            h.processWatermark(6_000);
            assertThat(main(h)).containsExactly("Bob,x@600", "Vas,click@1000");
            assertThat(side(h, DedupHarness.DUPLICATES))
                    .containsExactly("Vas,login@3000", "Vas,view@5000");
            assertThat(side(h, DedupHarness.LATE)).containsExactly("Vas,early@400");
        }
    }

    /**
     * A restore that switches back to {@link FirstBy#ARRIVAL} still judges the events that were
     * waiting, at their timers; new events pass as they arrive.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void switchingBackToArrivalStillJudgesTheWaitingEvents(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness(earliest().exact(false).build(), backend)) {
            h.open();
            h.processElement("Vas,login", 3_000);
            h.processElement("Vas,click", 1_000);
            snapshot = h.snapshot(1, 1);
        }
        DedupConfig arrival =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .fpp(0.001)
                        .emitDuplicates(true)
                        .noBundles()
                        .build();
        OperatorSubtaskState second;
        try (var h = harness(arrival, backend)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement("Bob,now", 2_000);
            assertThat(main(h)).containsExactly("Bob,now@2000");
            second = h.snapshot(2, 2); // still records waiting events
        }
        try (var h = harness(arrival, backend)) {
            h.initializeState(second);
            h.open();
            h.processWatermark(3_000);
            assertThat(main(h)).containsExactly("Vas,click@1000");
            assertThat(side(h, DedupHarness.DUPLICATES)).containsExactly("Vas,login@3000");
            h.processElement("Vas,again", 4_000);
            assertThat(side(h, DedupHarness.DUPLICATES))
                    .containsExactly("Vas,login@3000", "Vas,again@4000");
        }
    }

    /** Global mode: the shard is the current key, derived from the hash computed on arrival. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalModeKeepsTheEarliestPerId(Backend backend) throws Exception {
        DedupConfig config = earliest().exact(false).shards(16).build();
        DedupFunction<Integer, String> function =
                new DedupFunction<>(
                        USER,
                        config,
                        BloomDedup.itemsPerShard(1000, 16),
                        16,
                        DedupHarness.DUPLICATES,
                        DedupHarness.REJECTED,
                        DedupHarness.LATE);
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new DedupOperator<>(function, config),
                        new Shards.Selector<>(USER, 16, config.hasher()),
                        Types.INT,
                        DedupHarness.MAX_PARALLELISM,
                        1,
                        0)) {
            h.setStateBackend(backend.create());
            h.open();
            for (int u = 0; u < 50; u++) {
                h.processElement(new StreamRecord<>("u" + u + ",late", 2_000L + u));
                h.processElement(new StreamRecord<>("u" + u + ",early", 1_000L + u));
            }
            h.processWatermark(Long.MAX_VALUE);
            List<String> passed =
                    h.extractOutputValues().stream().sorted().collect(Collectors.toList());
            assertThat(passed).hasSize(50).allMatch(e -> e.endsWith(",early"));
        }
    }

    @Test
    void refusesProcessingTimeNamingTheOption() {
        DedupConfig.Builder b =
                DedupConfig.builder()
                        .firstBy(FirstBy.EVENT_TIME)
                        .retention(Duration.ofMinutes(1), TimeDomain.PROCESSING_TIME);
        assertThatThrownBy(b::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("firstBy EVENT_TIME needs event time")
                .hasMessageContaining("PROCESSING_TIME");
        assertThat(DedupConfig.builder().build().firstBy()).isEqualTo(FirstBy.ARRIVAL);
        assertThat(DedupConfig.builder().firstBy(FirstBy.EVENT_TIME).build().toString())
                .contains("firstBy=EVENT_TIME");
    }

    /**
     * Dedup shape 4 records firstBy and whether events may wait; a record of version 3 restores as
     * state without waiting events, and an ARRIVAL shape that restored waiting events keeps saying
     * so in its own snapshots.
     */
    @Test
    void theShapeRecordsFirstByAndWaitingEvents() {
        DedupConfig arrival = DedupConfig.builder().build();
        StateShape earliest = StateShape.of(earliest().build(), 0);
        assertThat(earliest.encode())
                .startsWith("version=4;")
                .contains(";firstBy=EVENT_TIME;pendingEvents=true;");
        assertThat(earliest.mayHoldPendingEvents()).isTrue();
        StateShape plain = StateShape.of(arrival, 0);
        assertThat(plain.encode()).contains(";firstBy=ARRIVAL;pendingEvents=false;");
        assertThat(plain.mayHoldPendingEvents()).isFalse();
        assertThat(plain.withPendingEvents().mayHoldPendingEvents()).isTrue();
        StateShape v3 =
                StateShape.decode(
                        plain.encode()
                                .replace("version=4", "version=3")
                                .replace(";firstBy=ARRIVAL;pendingEvents=false", ""));
        assertThat(v3.mayHoldPendingEvents()).isFalse();
        earliest.checkRestore(v3, org.slf4j.LoggerFactory.getLogger(EarliestDedupTest.class));
    }

    /** Keys with events waiting, counted through the keyed backend. */
    static long pendingKeys(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        var backend =
                ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>)
                                h.getOperator())
                        .getKeyedStateBackend();
        try (var keys = backend.getKeysAndNamespaces(DedupFunction.PENDING_STATE)) {
            return keys.map(kn -> kn.f0).distinct().count();
        }
    }
}
