package io.bloomstream.flink.internal;

import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.PrioritizedOperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.TaskStateManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key serializer of the keyed state an operator is about to restore, read before Flink's keyed
 * backend restores it. A backend that finds another key serializer than the job's fails with its
 * own {@code StateMigrationException}, which Flink's restart strategy retries for ever; an operator
 * that reads the key serializer first can refuse the restore for good ({@link RefusedRestore}),
 * naming the cause.
 *
 * <p>It reads the metadata at the head of the restored state's first keyed handle (Flink's {@link
 * KeyedBackendSerializationProxy}), as both backends' restores do: the whole stream of a full
 * snapshot ({@link KeyGroupsStateHandle}: heap checkpoints, canonical savepoints) or the metadata
 * handle of an incremental one ({@link IncrementalKeyedStateHandle}: RocksDB checkpoints, native
 * savepoints). Another handle (the changelog backend's), or metadata it cannot read, leaves the
 * check to Flink's restore, as before.
 */
@Internal
public final class RestoredKeys {

    private static final Logger LOG = LoggerFactory.getLogger(RestoredKeys.class);

    private RestoredKeys() {}

    /**
     * The key serializer the operator's restored keyed state was written with, when it is one the
     * job's key serializer cannot read; empty when nothing is restored, the two are compatible, or
     * the restored one cannot be read.
     *
     * @param taskState the task's state manager (its restore state is set before the operator's
     *     state is initialized)
     * @param operator the operator's id
     * @param keySerializer the job's key serializer for the operator
     * @param classLoader the user code class loader, for the restored serializer snapshots
     */
    public static Optional<TypeSerializerSnapshot<?>> incompatible(
            TaskStateManager taskState,
            OperatorID operator,
            TypeSerializer<?> keySerializer,
            ClassLoader classLoader) {
        PrioritizedOperatorSubtaskState restored = taskState.prioritizedOperatorState(operator);
        if (!restored.isRestored()) {
            return Optional.empty();
        }
        for (KeyedStateHandle handle : restored.getJobManagerManagedKeyedState()) {
            StreamStateHandle metaData = metaData(handle);
            if (metaData == null) {
                continue;
            }
            try (FSDataInputStream in = metaData.openInputStream()) {
                KeyedBackendSerializationProxy<Object> proxy =
                        new KeyedBackendSerializationProxy<>(classLoader);
                proxy.read(new DataInputViewStreamWrapper(in));
                TypeSerializerSnapshot<?> was = proxy.getKeySerializerSnapshot();
                return compatibility(keySerializer, was).isIncompatible()
                        ? Optional.of(was)
                        : Optional.empty();
            } catch (Exception e) {
                LOG.debug("Cannot read the restored key serializer of operator {}", operator, e);
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    @SuppressWarnings("unchecked")
    private static <K> TypeSerializerSchemaCompatibility<K> compatibility(
            TypeSerializer<K> now, TypeSerializerSnapshot<?> was) {
        return now.snapshotConfiguration()
                .resolveSchemaCompatibility((TypeSerializerSnapshot<K>) was);
    }

    /** The handle whose stream begins with the backend's metadata, or null. */
    private static StreamStateHandle metaData(KeyedStateHandle handle) {
        if (handle instanceof KeyGroupsStateHandle) {
            return (KeyGroupsStateHandle) handle;
        }
        if (handle instanceof IncrementalKeyedStateHandle) {
            return ((IncrementalKeyedStateHandle) handle).getMetaDataStateHandle();
        }
        return null;
    }

    /**
     * The name of the type a key serializer snapshot's serializer writes, for a message: {@code
     * StringSerializer}, or the snapshot's class when its serializer cannot be made.
     */
    public static String describe(TypeSerializerSnapshot<?> snapshot) {
        try {
            return snapshot.restoreSerializer().getClass().getSimpleName();
        } catch (RuntimeException e) {
            return snapshot.getClass().getName();
        }
    }
}
