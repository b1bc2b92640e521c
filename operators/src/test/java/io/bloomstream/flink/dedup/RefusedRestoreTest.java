package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.Shards;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.KeyedEvents;
import java.time.Duration;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests that the dedup's refused restores ({@link StateShape}) fail for good: a {@link
 * SuppressRestartsException} around the message, which names what happened. The mini-cluster
 * counterpart under a restart strategy is {@link RefusedRestoreITCase}.
 */
class RefusedRestoreTest {

    private static final DedupConfig PLAIN =
            DedupConfig.builder().expectedItems(1000).fpp(0.01).build();

    private static OperatorSubtaskState snapshot(DedupConfig config, int shards) throws Exception {
        try (var h = DedupHarness.create(config, Backend.HEAP, 1, 0, 1000, shards)) {
            h.open();
            for (int i = 0; i < 20; i++) {
                h.processElement("k" + (i % 4) + "," + i, 1000L + i);
            }
            DedupHarness.judge(h);
            return h.snapshot(1, 1);
        }
    }

    @Test
    void aPerKeySavepointRestoredIntoGlobalSaysSo() throws Exception {
        OperatorSubtaskState perKey = snapshot(PLAIN, 0);
        try (var h = DedupHarness.create(PLAIN, Backend.HEAP, 1, 0, 1000, 1024)) {
            assertThatThrownBy(() -> h.initializeState(perKey))
                    .isInstanceOf(SuppressRestartsException.class)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(
                            "field shards was none (per key) in the savepoint and is 1024")
                    .hasMessageContaining(
                            "a savepoint of BloomDedup.perKey restored into BloomDedup.global")
                    .hasMessageContaining("BloomDedup.withUidPrefix");
        }
    }

    /**
     * A per-key savepoint with String keys restored into global mode (INT shard keys) under the
     * same uid: Flink's backend refused it with its own StateMigrationException (the key serializer
     * differs), which the restart strategy met again on every restart; the operator reads the
     * restored key serializer first and refuses for good, naming both modes. On both backends (full
     * snapshots of the heap, incremental ones of RocksDB: each keeps the key serializer in its own
     * place).
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void aPerKeySavepointWithStringKeysRestoredIntoGlobalFailsForGood(Backend backend)
            throws Exception {
        OperatorSubtaskState perKey;
        try (var h = DedupHarness.create(PLAIN, backend, 1, 0, 1000, 0)) {
            h.open();
            for (int i = 0; i < 20; i++) {
                h.processElement("k" + (i % 4) + "," + i, 1000L + i);
            }
            perKey = h.snapshot(1, 1);
        }
        DedupConfig global = DedupConfig.builder().expectedItems(1000).fpp(0.01).shards(8).build();
        DedupFunction<Integer, String> function =
                new DedupFunction<>(
                        KeyedEvents.idSelector(),
                        global,
                        125,
                        8,
                        DedupHarness.DUPLICATES,
                        DedupHarness.REJECTED,
                        DedupHarness.LATE);
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<Integer, String, String>(
                        new DedupOperator<>(function, global),
                        new Shards.Selector<>(KeyedEvents.idSelector(), 8, global.hasher()),
                        Types.INT,
                        128,
                        1,
                        0)) {
            h.setStateBackend(backend.create());
            assertThatThrownBy(() -> h.initializeState(perKey))
                    .isInstanceOf(SuppressRestartsException.class)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(
                            "its keys were written by StringSerializer and the job's keys are read"
                                    + " by IntSerializer")
                    .hasMessageContaining(
                            "a savepoint of BloomDedup.perKey restored into BloomDedup.global")
                    .hasMessageContaining("BloomDedup.withUidPrefix");
        }
    }

    @Test
    void retentionSwitchedOnFailsForGood() throws Exception {
        OperatorSubtaskState plain = snapshot(PLAIN, 0);
        DedupConfig retention =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .fpp(0.01)
                        .retention(Duration.ofHours(1), TimeDomain.EVENT_TIME)
                        .build();
        try (var h = DedupHarness.create(retention, Backend.HEAP, 1, 0, 1000, 0)) {
            assertThatThrownBy(() -> h.initializeState(plain))
                    .isInstanceOf(SuppressRestartsException.class)
                    .cause()
                    .hasMessageContaining("field timeDomain was none (no retention)");
        }
    }
}
