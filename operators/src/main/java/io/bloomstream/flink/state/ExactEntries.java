package io.bloomstream.flink.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.BooleanSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.internal.InternalMapState;

/**
 * Exact mode's entries in the DataStream operator's keyed state, for {@link KeyedStateStore}: one
 * keyed {@code MapState<String, Boolean>} (key: the id's {@link ExactKeys exact key}, value: always
 * true) whose <em>namespace</em> is the generation slot, so that a key's entries of one slot are
 * one (key, namespace) of the state. Dropping a slot is then the {@code clear()} of its namespace,
 * not a walk over the key's entries in the judge: the heap backend removes the slot's map from its
 * state table at once; RocksDB seeks to the (key group, key, namespace) prefix and deletes the
 * entries under it through one write batch (a tombstone per entry, flushed every {@code
 * state.backend.rocksdb.write-batch-size}), on the timer path only. Without retention every entry
 * is in slot 0 and none is ever dropped. Reads and writes go straight to the state (no write-back
 * cache: a first occurrence is one write, a filter's "maybe" one read).
 *
 * <p>The state is obtained from the operator's keyed state backend with an {@link IntSerializer}
 * namespace (a function's runtime context offers only the void namespace). Its name and the exact
 * key's format are part of the savepoint contract (exact entries format {@link
 * ExactKeys#VERSION_1}, docs/state.md).
 */
@Internal
public final class ExactEntries {

    private final InternalMapState<?, Integer, String, Boolean> state;

    /** The current event's exact key. */
    private String id;

    private ExactEntries(InternalMapState<?, Integer, String, Boolean> state) {
        this.state = state;
    }

    /** The descriptor of the exact entries' state named {@code name}. */
    public static MapStateDescriptor<String, Boolean> descriptor(String name) {
        return new MapStateDescriptor<>(
                name, StringSerializer.INSTANCE, BooleanSerializer.INSTANCE);
    }

    /** The exact entries in state {@code name} of an operator's keyed state backend. */
    @SuppressWarnings("unchecked")
    public static ExactEntries open(KeyedStateBackend<?> backend, String name) throws Exception {
        return new ExactEntries(
                (InternalMapState<?, Integer, String, Boolean>)
                        backend.getOrCreateKeyedState(IntSerializer.INSTANCE, descriptor(name)));
    }

    /** Binds the current event's exact key (the backend's current key is the event's key). */
    public void bind(String exactKey) {
        this.id = exactKey;
    }

    /** Whether slot {@code slot} of the current key holds the bound id. */
    public boolean contains(int slot) throws Exception {
        state.setCurrentNamespace(slot);
        return state.contains(id);
    }

    /** Adds the bound id to slot {@code slot} of the current key. */
    public void add(int slot) throws Exception {
        state.setCurrentNamespace(slot);
        state.put(id, Boolean.TRUE);
    }

    /** Drops every entry of the current key in the slots of {@code slots} (bit s: slot s). */
    public void drop(long slots) {
        for (long rest = slots; rest != 0; rest &= rest - 1) {
            state.setCurrentNamespace(Long.numberOfTrailingZeros(rest));
            state.clear();
        }
    }
}
