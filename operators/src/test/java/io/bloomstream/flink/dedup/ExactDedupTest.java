package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.DUPLICATES;
import static io.bloomstream.flink.dedup.DedupHarness.REJECTED;
import static io.bloomstream.flink.dedup.DedupHarness.output;
import static io.bloomstream.flink.dedup.DedupHarness.side;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.state.ExactEntries;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Harness tests of exact mode ({@link DedupConfig.Builder#exact}) on the heap and RocksDB backends:
 * behind a deliberately bad filter (fpp 0.3, a tenth of the ids it gets), every first occurrence
 * passes and every duplicate is dropped, per key and global; exact entries expire with their
 * generation and survive a snapshot and restore.
 */
class ExactDedupTest {

    /**
     * 0.3 for 200 ids, fixed (it does not grow), in 4 shards in global mode: the filter alone drops
     * most of 2,000 first occurrences.
     */
    private static DedupConfig.Builder bad() {
        return DedupConfig.builder()
                .expectedItems(200)
                .fpp(0.3)
                .fixed()
                .shards(4)
                .emitDuplicates(true);
    }

    /** 2,000 distinct ids, then each again, in a fixed shuffled order. */
    private static List<String> stream(String prefix) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            ids.add(prefix + i);
        }
        List<String> again = new ArrayList<>(ids);
        java.util.Collections.shuffle(again, new java.util.Random(31));
        ids.addAll(again);
        return ids;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalModePassesEveryFirstOccurrenceBehindABadFilter(Backend backend) throws Exception {
        List<String> events = stream("id-");
        assertThat(globalPassed(bad().build(), backend, events))
                .as("the filter alone drops first occurrences")
                .hasSizeLessThan(1000);
        for (DedupConfig config :
                List.of(bad().exact(true).build(), bad().exact(true).noBundles().build())) {
            assertThat(globalPassed(config, backend, events))
                    .as(config.toString())
                    .isEqualTo(events.subList(0, 2000));
        }
    }

    /**
     * On RocksDB new exact entries wait in a write-behind buffer of {@link
     * ExactEntries#PENDING_LIMIT} entries: a full buffer is written without a snapshot, and ids
     * buffered or written are both found (the repeats straddle the write).
     */
    @org.junit.jupiter.api.Test
    void aFullWriteBehindBufferIsWrittenAndItsIdsStillFound() throws Exception {
        int n = ExactEntries.PENDING_LIMIT + 4000;
        List<String> events = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            events.add("w-" + i);
        }
        for (int i = 0; i < n; i += 7) {
            events.add("w-" + i); // repeats of written and of buffered ids
        }
        Hash64PathTest.Built op = Hash64PathTest.operator(bad().exact(true).build());
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op.operator(), op.keys(), Types.INT, 128, 1, 0)) {
            h.setStateBackend(Backend.ROCKSDB.create());
            h.open();
            for (String id : events) {
                h.processElement(new StreamRecord<>(id));
            }
            assertThat(exactKeys(h, false))
                    .as("written when the buffer filled, before any snapshot")
                    .hasSize(ExactEntries.PENDING_LIMIT);
            assertThat(h.extractOutputValues())
                    .containsExactlyInAnyOrderElementsOf(events.subList(0, n));
            assertThat(exactEntries(h)).isEqualTo(n);
        }
    }

    private static List<String> globalPassed(DedupConfig config, Backend backend, List<String> in)
            throws Exception {
        Hash64PathTest.Built op = Hash64PathTest.operator(config);
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op.operator(), op.keys(), Types.INT, 128, 1, 0)) {
            h.setStateBackend(backend.create());
            h.open();
            for (String id : in) {
                h.processElement(new StreamRecord<>(id));
            }
            ((DedupOperator<?, ?>) op.operator()).judgeBundleNow();
            if (config.exact()) {
                assertThat(exactEntries(h)).as("exact entries").isEqualTo(2000);
            }
            return h.extractOutputValues();
        }
    }

    /**
     * Global mode rescaled from 2 subtasks to 1 and to 3: each shard moves with its filter and its
     * exact entries, so every stored id is still dropped and, behind the bad filter, every new id
     * passes.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalShardsMoveWithTheirExactEntriesOnRescale(Backend backend) throws Exception {
        DedupConfig config = bad().exact(true).build();
        int n = 1000;
        List<OperatorSubtaskState> parts = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            Hash64PathTest.Built op = Hash64PathTest.operator(config);
            try (var h =
                    new KeyedOneInputStreamOperatorTestHarness<>(
                            op.operator(), op.keys(), Types.INT, 128, 2, subtask)) {
                h.setStateBackend(backend.create());
                h.open();
                for (int i = 0; i < n; i++) {
                    if (ownedBy(op.keys().getKey("id-" + i), 2, subtask)) {
                        h.processElement(new StreamRecord<>("id-" + i));
                    }
                }
                parts.add(h.snapshot(1, 1));
            }
        }
        OperatorSubtaskState merged =
                AbstractStreamOperatorTestHarness.repackageState(
                        parts.toArray(new OperatorSubtaskState[0]));
        for (int parallelism : new int[] {1, 3}) {
            List<String> passed = new ArrayList<>();
            long entries = 0;
            for (int subtask = 0; subtask < parallelism; subtask++) {
                Hash64PathTest.Built op = Hash64PathTest.operator(config);
                try (var h =
                        new KeyedOneInputStreamOperatorTestHarness<>(
                                op.operator(), op.keys(), Types.INT, 128, parallelism, subtask)) {
                    h.setStateBackend(backend.create());
                    h.initializeState(
                            AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                    merged, 128, 2, parallelism, subtask));
                    h.open();
                    entries += exactEntries(h);
                    for (int i = 0; i < 2 * n; i++) {
                        if (ownedBy(op.keys().getKey("id-" + i), parallelism, subtask)) {
                            h.processElement(new StreamRecord<>("id-" + i));
                        }
                    }
                    ((DedupOperator<?, ?>) op.operator()).judgeBundleNow();
                    passed.addAll(h.extractOutputValues());
                }
            }
            assertThat(entries).as("parallelism %d", parallelism).isEqualTo(n);
            assertThat(passed)
                    .as("parallelism %d", parallelism)
                    .hasSize(n)
                    .allSatisfy(
                            id ->
                                    assertThat(Integer.parseInt(id.substring(3)))
                                            .isGreaterThanOrEqualTo(n));
        }
    }

    private static boolean ownedBy(Object key, int parallelism, int subtask) {
        int keyGroup =
                org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignToKeyGroup(key, 128);
        return org.apache.flink.runtime.state.KeyGroupRangeAssignment
                        .computeOperatorIndexForKeyGroup(128, parallelism, keyGroup)
                == subtask;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void perKeyModePassesEveryFirstOccurrenceBehindABadFilter(Backend backend) throws Exception {
        List<String> events = new ArrayList<>();
        for (String id : stream("")) {
            events.add("k" + (id.hashCode() & 3) + "," + id);
        }
        try (HarnessMetrics m = new HarnessMetrics();
                var h = DedupHarness.create(bad().exact(true).build(), backend, m, 200, 0)) {
            h.open();
            for (String e : events) {
                h.processElement(e, 0);
            }
            h.processElement("k0,", 0);
            assertThat(output(h)).isEqualTo(events.subList(0, 2000));
            assertThat(side(h, DUPLICATES)).isEqualTo(events.subList(2000, 4000));
            assertThat(side(h, REJECTED)).containsExactly("k0,");
            long caught = m.count(DedupMetrics.FALSE_POSITIVES_CAUGHT);
            assertThat(caught).as("false positives caught").isGreaterThan(100);
            // every duplicate read its id; a first occurrence read only on a false "maybe"
            assertThat(m.count(DedupMetrics.EXACT_READS)).isEqualTo(2000 + caught);
            assertThat(exactEntries(h)).isEqualTo(2000);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void exactEntriesExpireWithTheirGenerationAndGoWithTheKey(Backend backend) throws Exception {
        // R = 10 s in 2 generations of L = 10 s: the generation of 1 s is consulted by no on-time
        // event past 31 s (its bucket ends by 11 s plus the key's phase); that of 36 s lives on.
        DedupConfig config =
                bad().exact(true).retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME).build();
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            for (int i = 0; i < 50; i++) {
                h.processElement("a,old" + i, 1_000);
                h.processElement("a,new" + i, 36_000);
            }
            assertThat(output(h)).hasSize(100);
            assertThat(exactEntries(h)).isEqualTo(100);
            h.processWatermark(35_000);
            assertThat(exactEntries(h)).as("the old generation's entries").isEqualTo(50);
            h.processElement("a,new7", 36_000);
            assertThat(output(h)).as("new7 is still remembered").hasSize(100);
            h.processWatermark(100_000);
            assertThat(exactEntries(h)).isZero();
            assertThat(DedupHarness.keysWithState(h)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void snapshotThenRestoreKeepsTheExactEntries(Backend backend) throws Exception {
        DedupConfig config = bad().exact(true).build();
        OperatorSubtaskState snapshot;
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.open();
            for (int i = 0; i < 1000; i++) {
                h.processElement("k" + (i % 5) + "," + i, 0);
            }
            assertThat(output(h)).hasSize(1000);
            snapshot = h.snapshot(1, 1);
        }
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            h.initializeState(snapshot);
            h.open();
            assertThat(exactEntries(h)).isEqualTo(1000);
            for (int i = 0; i < 2000; i++) {
                h.processElement("k" + (i % 5) + "," + i, 0);
            }
            assertThat(output(h)).as("only the new ids, every one of them").hasSize(1000);
            assertThat(output(h).get(0)).isEqualTo("k0,1000");
        }
    }

    /**
     * The exact entries in the operator's keyed state, counted key by key and slot by slot through
     * the backend (heap or RocksDB), after the bundle is judged and the cache written back.
     */
    static long exactEntries(AbstractStreamOperatorTestHarness<?> h) throws Exception {
        return exactKeys(h).size();
    }

    /**
     * The exact keys in the operator's keyed state (of every key and slot), as {@link
     * #exactEntries}.
     */
    static List<String> exactKeys(AbstractStreamOperatorTestHarness<?> h) throws Exception {
        return exactKeys(h, true);
    }

    /** The exact keys in state, after writing what is buffered only if {@code flush}. */
    @SuppressWarnings("unchecked")
    static List<String> exactKeys(AbstractStreamOperatorTestHarness<?> h, boolean flush)
            throws Exception {
        DedupOperator<?, ?> op = (DedupOperator<?, ?>) h.getOperator();
        op.judgeBundleNow();
        if (flush) {
            op.flush();
        }
        KeyedStateBackend<Object> backend =
                (KeyedStateBackend<Object>) ((AbstractStreamOperator<?>) op).getKeyedStateBackend();
        Object current = backend.getCurrentKey();
        List<String> found = new ArrayList<>();
        for (int slot = 0; slot < 64; slot++) {
            List<Object> keys;
            try (var stream = backend.getKeys(DedupFunction.EXACT_STATE, slot)) {
                keys = stream.collect(Collectors.toList());
            }
            for (Object key : keys) {
                backend.setCurrentKey(key);
                var state =
                        (InternalMapState<Object, Integer, String, Boolean>)
                                backend.getOrCreateKeyedState(
                                        IntSerializer.INSTANCE,
                                        ExactEntries.descriptor(DedupFunction.EXACT_STATE));
                state.setCurrentNamespace(slot);
                for (String id : state.keys()) {
                    found.add(id);
                }
            }
        }
        if (current != null) {
            backend.setCurrentKey(current);
        }
        return found;
    }
}
