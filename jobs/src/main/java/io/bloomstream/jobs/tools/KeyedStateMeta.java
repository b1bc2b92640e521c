package io.bloomstream.jobs.tools;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * What an operator's keyed state in a savepoint is: its states by name, with their serializers'
 * snapshots, and the key serializer's snapshot, as the header of its first key-groups handle has
 * them. Read as Flink 2.3's {@code SavepointLoader.loadOperatorStateMetadata} does, which Flink
 * 2.2's State Processor API lacks, with the key serializer too. Only handles of the canonical
 * savepoint format (and heap checkpoints) carry that header where it can be read alone; a native
 * RocksDB savepoint or checkpoint is refused, naming the format.
 */
record KeyedStateMeta(
        Map<String, StateMetaInfoSnapshot> states, TypeSerializerSnapshot<?> keySerializer) {

    /** The operator's keyed state, or empty if it has none. */
    static Optional<KeyedStateMeta> of(OperatorState op) throws IOException {
        KeyedStateHandle handle = null;
        for (OperatorSubtaskState subtask : op.getStates()) {
            for (KeyedStateHandle h : subtask.getManagedKeyedState()) {
                handle = h;
                break;
            }
            if (handle != null) {
                break;
            }
        }
        if (handle == null) {
            return Optional.empty();
        }
        if (!(handle instanceof KeyGroupsStateHandle)) {
            throw new IllegalArgumentException(
                    "operator "
                            + op.getOperatorID()
                            + " keeps its keyed state as "
                            + handle.getClass().getSimpleName()
                            + " (a native RocksDB savepoint or checkpoint): take a savepoint in"
                            + " the canonical format (flink stop --type canonical)");
        }
        KeyedBackendSerializationProxy<?> proxy =
                new KeyedBackendSerializationProxy<>(
                        Thread.currentThread().getContextClassLoader());
        try (FSDataInputStream in =
                ((KeyGroupsStateHandle) handle).getDelegateStateHandle().openInputStream()) {
            proxy.read(new DataInputViewStreamWrapper(in));
        }
        Map<String, StateMetaInfoSnapshot> states = new LinkedHashMap<>();
        for (StateMetaInfoSnapshot s : proxy.getStateMetaInfoSnapshots()) {
            states.put(s.getName(), s);
        }
        return Optional.of(new KeyedStateMeta(states, proxy.getKeySerializerSnapshot()));
    }
}
