package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.output;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Restores dedup operator snapshots committed under {@code src/test/resources/savepoints}, with
 * heap and RocksDB backends: bloomstream 0.1 (metadata layout 1, no retention, no shape record) and
 * 0.2 (layout 2, event-time retention, shape record), 0.4 (layout 3, written through the write-back
 * cache), all three hashed with XXH3-128, and 0.5 (layout 3, the 64-bit hash path: XXH3-64, the
 * default strategy since then), 0.5 in exact mode (dedup shape 3, exact entries 1), and 0.5 with
 * {@link FirstBy#EVENT_TIME} and events still waiting (dedup shape 4). The state layout (state
 * names, serializers and their snapshots) must stay restorable. Rewrite them only when adding a new
 * version's files, with {@code -Dbloomstream.writeSnapshots=true} (which writes the current
 * version's files only).
 */
class SavepointCompatibilityTest {

    private static final int IDS = 1000;

    /** A committed snapshot version: its config and its events (in arrival order). */
    enum Version {
        V0_1(
                "0.1",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .hashStrategy(HashStrategy.XXH3_128)
                        .build()),
        V0_2(
                "0.2",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .hashStrategy(HashStrategy.XXH3_128)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .build()),
        /** 0.4: metadata layout 3, written through the write-back cache. */
        V0_4(
                "0.4",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .hashStrategy(HashStrategy.XXH3_128)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .build()),
        /** 0.5: the 64-bit hash path (strategy XXH3_64, the new default), same layout 3. */
        V0_5(
                "0.5",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .build()),
        /**
         * 0.5 in exact mode (dedup shape 3, exact entries 1) behind a deliberately bad filter (0.3,
         * fixed, each key's 200 ids in a filter for 100), so that what restores is judged by the
         * exact entries.
         */
        V0_5_EXACT(
                "exact-0.5",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.3)
                        .fixed()
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .exact(true)
                        .build()),
        /**
         * 0.5 with {@link FirstBy#EVENT_TIME} (dedup shape 4, the keyed state {@value
         * DedupFunction#PENDING_STATE}), taken with events still waiting: ids 0..499 passed at the
         * watermark, ids 500..999 waiting twice each, at time(i) and time(i) + 3 ({@link
         * #writeEarliest}). Exact mode, so that what restores is judged without false positives.
         */
        V0_5_EARLIEST(
                "earliest-0.5",
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .exact(true)
                        .emitDuplicates(true)
                        .firstBy(FirstBy.EVENT_TIME)
                        .build());

        final String name;
        final DedupConfig config;

        Version(String name, DedupConfig config) {
            this.name = name;
            this.config = config;
        }

        Path file(Backend backend) {
            return Path.of(
                    "src/test/resources/savepoints/dedup-"
                            + name
                            + "-"
                            + backend.name().toLowerCase()
                            + ".snapshot");
        }

        /** Event i's timestamp: 10 ms apart, so 1000 events span 10 s (within retention). */
        long time(int i) {
            return this == V0_1 ? 0 : 1_700_000_000_000L + 10L * i;
        }
    }

    static String event(int i) {
        return "k" + (i % 5) + "," + i;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresTheCommittedSnapshots(Backend backend) throws Exception {
        for (Version v : Version.values()) {
            if (v == Version.V0_5_EARLIEST) {
                continue; // its events wait for the watermark: restoresTheEarliestSnapshot
            }
            try (var h = DedupHarness.create(v.config, backend, 1, 0)) {
                h.initializeState(OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()));
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(event(i), v.time(i));
                }
                assertThat(output(h)).as("%s: every id of the snapshot is remembered", v).isEmpty();
                for (int i = IDS; i < IDS + 100; i++) {
                    h.processElement(event(i), v.time(i));
                }
                // 100 new ids, cascade rate <= 1%: 4.5 sigma allows 5 false drops.
                assertThat(output(h).size()).as(v.name).isBetween(95, 100);
            }
        }
    }

    /**
     * The exact snapshot holds each of its 1000 ids itself (exact entries 1: a string id is its own
     * key), and after the restore its exact entries decide: every stored id is dropped, and each of
     * 100 new ids passes although the bad filter says "maybe" for some of them.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresTheExactSnapshotWithEveryIdItself(Backend backend) throws Exception {
        Version v = Version.V0_5_EXACT;
        try (HarnessMetrics m = new HarnessMetrics();
                var h = DedupHarness.create(v.config, backend, m)) {
            h.initializeState(OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()));
            h.open();
            List<String> stored = new ArrayList<>();
            for (int i = 0; i < IDS; i++) {
                stored.add(Integer.toString(i));
            }
            assertThat(ExactDedupTest.exactKeys(h)).containsExactlyInAnyOrderElementsOf(stored);
            for (int i = 0; i < IDS; i++) {
                h.processElement(event(i), v.time(i));
            }
            assertThat(output(h)).isEmpty();
            for (int i = IDS; i < IDS + 100; i++) {
                h.processElement(event(i), v.time(i));
            }
            assertThat(output(h)).hasSize(100);
            assertThat(m.count(DedupMetrics.FALSE_POSITIVES_CAUGHT)).isPositive();
        }
    }

    /**
     * The snapshot of {@link Version#V0_5_EARLIEST}, restored with its 1,000 waiting events: ids
     * 0..499 stay passed (a later occurrence is a duplicate); of ids 500..749 the waiting
     * occurrence at time(i) passes when the watermark reaches it, and of ids 750..999 an occurrence
     * at time(i) - 2 sent after the restore wins over both waiting ones.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresTheEarliestSnapshotWithItsWaitingEvents(Backend backend) throws Exception {
        Version v = Version.V0_5_EARLIEST;
        try (var h = DedupHarness.create(v.config, backend, 1, 0)) {
            h.initializeState(OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()));
            h.open();
            assertThat(EarliestDedupTest.pendingKeys(h)).isEqualTo(5);
            for (int i = 0; i < IDS / 2; i++) {
                h.processElement(event(i), v.time(i) + 5_000);
            }
            for (int i = 3 * IDS / 4; i < IDS; i++) {
                h.processElement(event(i), v.time(i) - 2);
            }
            assertThat(EarliestDedupTest.main(h)).isEmpty();
            h.processWatermark(Long.MAX_VALUE);
            List<String> expected = new ArrayList<>();
            for (int i = IDS / 2; i < IDS; i++) {
                expected.add(event(i) + "@" + (v.time(i) - (i < 3 * IDS / 4 ? 0 : 2)));
            }
            assertThat(EarliestDedupTest.main(h)).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(EarliestDedupTest.side(h, DedupHarness.DUPLICATES))
                    .hasSize(IDS / 2 + IDS / 2 + IDS / 4);
            assertThat(EarliestDedupTest.pendingKeys(h)).isZero();
        }
    }

    /**
     * Restored with {@link FirstBy#ARRIVAL}, the earliest snapshot's waiting events are still
     * judged at their timers; and a snapshot without waiting events (0.5) restores under {@link
     * FirstBy#EVENT_TIME}, its ids remembered.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void firstByMaySwitchEitherWayAtARestore(Backend backend) throws Exception {
        Version earliest = Version.V0_5_EARLIEST;
        DedupConfig arrival =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .exact(true)
                        .build();
        try (var h = DedupHarness.create(arrival, backend, 1, 0)) {
            h.initializeState(
                    OperatorSnapshotUtil.readStateHandle(earliest.file(backend).toString()));
            h.open();
            h.processWatermark(Long.MAX_VALUE);
            assertThat(output(h)).hasSize(IDS / 2);
        }
        Version v = Version.V0_5;
        DedupConfig toEarliest =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .firstBy(FirstBy.EVENT_TIME)
                        .build();
        try (var h = DedupHarness.create(toEarliest, backend, 1, 0)) {
            h.initializeState(OperatorSnapshotUtil.readStateHandle(v.file(backend).toString()));
            h.open();
            for (int i = 0; i < IDS + 100; i++) {
                h.processElement(event(i), v.time(i));
            }
            h.processWatermark(Long.MAX_VALUE);
            // the 1000 ids of the snapshot are remembered; of 100 new ones at most 5 are dropped
            // as false positives (cascade rate <= 1%: 4.5 sigma)
            assertThat(output(h).size()).isBetween(95, 100);
            assertThat(output(h)).allMatch(e -> Integer.parseInt(e.split(",")[1]) >= IDS);
        }
    }

    /** Writes the earliest snapshot: see {@link Version#V0_5_EARLIEST}. */
    private static void writeEarliest(Backend backend) throws Exception {
        Version v = Version.V0_5_EARLIEST;
        try (var h = DedupHarness.create(v.config, backend, 1, 0)) {
            h.open();
            for (int i = 0; i < IDS; i++) {
                h.processElement(event(i), v.time(i));
            }
            h.processWatermark(v.time(IDS / 2 - 1));
            for (int i = IDS / 2; i < IDS; i++) {
                h.processElement(event(i), v.time(i) + 3);
            }
            assertThat(output(h)).hasSize(IDS / 2);
            Files.createDirectories(v.file(backend).getParent());
            OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), v.file(backend).toString());
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theVersion2SnapshotRefusesAnotherSeed(Backend backend) throws Exception {
        DedupConfig other =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .hashStrategy(HashStrategy.XXH3_128)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .seed(7)
                        .build();
        try (var h = DedupHarness.create(other, backend, 1, 0)) {
            var state = OperatorSnapshotUtil.readStateHandle(Version.V0_2.file(backend).toString());
            assertThatThrownBy(
                            () -> {
                                h.initializeState(state);
                                h.open();
                            })
                    .hasStackTraceContaining(
                            "field seed was 7092166037570024562 (0x626c6f6f6d737472)")
                    .hasStackTraceContaining("is 7 (0x7) in the job's config");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void xxh3_128StateRefusesTheNewDefaultStrategyNamingTheField(Backend backend) throws Exception {
        DedupConfig byDefault =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .build();
        assertThat(byDefault.hashStrategy()).isEqualTo(HashStrategy.XXH3_64); // the default
        try (var h = DedupHarness.create(byDefault, backend, 1, 0)) {
            var state = OperatorSnapshotUtil.readStateHandle(Version.V0_4.file(backend).toString());
            assertThatThrownBy(
                            () -> {
                                h.initializeState(state);
                                h.open();
                            })
                    .hasStackTraceContaining(
                            "field strategy was XXH3_128 in the savepoint and is XXH3_64")
                    .hasStackTraceContaining("hashStrategy(HashStrategy.XXH3_128)");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void xxh3_64StateRefusesTheOldStrategy(Backend backend) throws Exception {
        DedupConfig old =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(0.01)
                        .hashStrategy(HashStrategy.XXH3_128)
                        .retention(Duration.ofSeconds(30), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .build();
        try (var h = DedupHarness.create(old, backend, 1, 0)) {
            var state = OperatorSnapshotUtil.readStateHandle(Version.V0_5.file(backend).toString());
            assertThatThrownBy(
                            () -> {
                                h.initializeState(state);
                                h.open();
                            })
                    .hasStackTraceContaining(
                            "field strategy was XXH3_64 in the savepoint and is XXH3_128");
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theVersion1SnapshotRefusesRetentionItWasNotWrittenWith(Backend backend) throws Exception {
        // 0.1 recorded no time domain: one slot means no retention, so adding one must fail
        // rather than read the old filter as a generation of the epoch.
        try (var h = DedupHarness.create(Version.V0_2.config, backend, 1, 0)) {
            h.initializeState(
                    OperatorSnapshotUtil.readStateHandle(Version.V0_1.file(backend).toString()));
            h.open();
            assertThatThrownBy(
                            () -> {
                                h.processElement(event(0), Version.V0_2.time(0));
                                DedupHarness.judge(h); // the bundle judges the event
                            })
                    .hasStackTraceContaining(
                            "field timeDomain was none (no retention) in the savepoint and is"
                                    + " EVENT_TIME");
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        for (Backend backend : Backend.values()) {
            writeEarliest(backend);
        }
    }
}
