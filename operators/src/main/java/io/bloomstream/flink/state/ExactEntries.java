package io.bloomstream.flink.state;

import java.util.HashMap;
import java.util.Map;
import java.util.function.LongConsumer;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.BooleanSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.streaming.api.operators.KeyContext;

/**
 * Exact mode's entries in the DataStream operator's keyed state, for {@link KeyedStateStore}: one
 * keyed {@code MapState<String, Boolean>} (key: the id's {@link ExactKeys exact key}, value: always
 * true) whose <em>namespace</em> is the generation slot, so that a key's entries of one slot are
 * one (key, namespace) of the state. Dropping a slot is then the {@code clear()} of its namespace,
 * not a walk over the key's entries in the judge: the heap backend removes the slot's map from its
 * state table at once; RocksDB seeks to the (key group, key, namespace) prefix and deletes the
 * entries under it through one write batch (a tombstone per entry, flushed every {@code
 * state.backend.rocksdb.write-batch-size}), on the timer path only. Without retention every entry
 * is in slot 0 and none is ever dropped.
 *
 * <p>Writes: on the heap backend each new entry goes straight to the state (a map put). On a
 * backend that serializes its state (RocksDB: {@link KeyedStateBackend#isSafeToReuseKVState}), a
 * put per entry pays RocksDB's whole write path (JNI, write group, memtable) for one small entry,
 * which measured two thirds of the operator's native time; new entries are therefore held in a
 * write-behind buffer of at most {@link #PENDING_LIMIT} entries and written per (key, slot) with
 * {@code putAll}, one write batch each, when the buffer is full, before every snapshot ({@link
 * #flush}, which the operator calls at the start of each checkpoint and savepoint, so snapshots
 * hold every entry) and at the end of input. A failure loses the buffer with the rest of the task's
 * uncheckpointed work, which the restore replays. Reads look in the buffer first; dropping a slot
 * drops its buffered entries too. The buffer holds a copy of each key (the input may reuse the
 * record a key is a field of), found again by the key's {@code equals}. A filter's "maybe" is one
 * read.
 *
 * <p>The state is obtained from the operator's keyed state backend with an {@link IntSerializer}
 * namespace (a function's runtime context offers only the void namespace). Its name and the exact
 * key's format are part of the savepoint contract (exact entries format {@link
 * ExactKeys#VERSION_1}, docs/state.md).
 *
 * <p>Each entry written is reported with its estimated bytes ({@link ExactEntrySize}: on the heap
 * backend its objects, on a serializing backend its serialized key and value), for the metrics.
 */
@Internal
public final class ExactEntries {

    /** The most entries held in the write-behind buffer (about 100 bytes each). */
    public static final int PENDING_LIMIT = 1 << 16;

    private final InternalMapState<?, Integer, String, Boolean> state;

    /** Switches the backend's current key for a flush; null: no write-behind buffer. */
    private final KeyContext keys;

    /** Copies a key held by the buffer. */
    private final TypeSerializer<Object> keyCopier;

    /** Entries not yet written, per (key, slot); null without the buffer. */
    private final Map<Pending, Map<String, Boolean>> pending;

    private int pendingEntries;

    /** Told the estimated bytes of each entry written. */
    private final LongConsumer written;

    /** Whether the backend serializes its state (entries are then sized as bytes, not objects). */
    private final boolean serialized;

    /** The key-group prefix of a serialized entry: 1 byte, 2 past 128 key groups. */
    private final int prefixBytes;

    /** The stream key's serialized bytes if its serializer has a fixed length, else -1. */
    private final int fixedKeyBytes;

    /** The backend's current key. */
    private final java.util.function.Supplier<Object> currentKey;

    /** The stream key last sized (variable length only) and its bytes. */
    private Object sizedKey;

    private int sizedKeyBytes;

    private DataOutputSerializer keyOut;

    /** The current event's exact key. */
    private String id;

    private ExactEntries(
            InternalMapState<?, Integer, String, Boolean> state,
            KeyContext keys,
            TypeSerializer<Object> keyCopier,
            boolean serialized,
            int prefixBytes,
            java.util.function.Supplier<Object> currentKey,
            LongConsumer written) {
        this.state = state;
        this.keys = keys;
        this.keyCopier = keyCopier;
        this.pending = keys == null ? null : new HashMap<>();
        this.serialized = serialized;
        this.prefixBytes = prefixBytes;
        this.fixedKeyBytes = keyCopier.getLength();
        this.currentKey = currentKey;
        this.written = written;
    }

    /** A (key, slot) of buffered entries. */
    private record Pending(Object key, int slot) {}

    /** The descriptor of the exact entries' state named {@code name}. */
    public static MapStateDescriptor<String, Boolean> descriptor(String name) {
        return new MapStateDescriptor<>(
                name, StringSerializer.INSTANCE, BooleanSerializer.INSTANCE);
    }

    /**
     * The exact entries in state {@code name} of an operator's keyed state backend.
     *
     * @param keys the operator, which switches the backend's current key: with a backend that
     *     serializes its state, new entries are buffered and written in batches (see above); null:
     *     every entry is written at once
     * @param written told the estimated bytes of each entry written ({@link ExactEntrySize})
     */
    @SuppressWarnings("unchecked")
    public static ExactEntries open(
            KeyedStateBackend<?> backend, String name, KeyContext keys, LongConsumer written)
            throws Exception {
        boolean serialized = backend.isSafeToReuseKVState();
        int prefixBytes =
                backend instanceof AbstractKeyedStateBackend<?> b
                                && b.getNumberOfKeyGroups() <= Byte.MAX_VALUE + 1
                        ? 1
                        : 2;
        return new ExactEntries(
                (InternalMapState<?, Integer, String, Boolean>)
                        backend.getOrCreateKeyedState(IntSerializer.INSTANCE, descriptor(name)),
                serialized ? keys : null,
                (TypeSerializer<Object>) backend.getKeySerializer(),
                serialized,
                prefixBytes,
                backend::getCurrentKey,
                written);
    }

    /** Binds the current event's exact key (the backend's current key is the event's key). */
    public void bind(String exactKey) {
        this.id = exactKey;
    }

    /** Whether slot {@code slot} of the current key holds the bound id. */
    public boolean contains(int slot) throws Exception {
        if (pendingEntries > 0) {
            Map<String, Boolean> p = pending.get(new Pending(keys.getCurrentKey(), slot));
            if (p != null && p.containsKey(id)) {
                return true;
            }
        }
        state.setCurrentNamespace(slot);
        return state.contains(id);
    }

    /** Adds the bound id to slot {@code slot} of the current key. */
    public void add(int slot) throws Exception {
        if (pending == null) {
            state.setCurrentNamespace(slot);
            state.put(id, Boolean.TRUE);
            written.accept(entryBytes());
            return;
        }
        Pending at = new Pending(keys.getCurrentKey(), slot);
        Map<String, Boolean> p = pending.get(at);
        if (p == null) {
            // the key may be a field of a record the input reuses: keep a copy, as bundles do
            p = new HashMap<>();
            pending.put(new Pending(keyCopier.copy(at.key()), slot), p);
        }
        if (p.put(id, Boolean.TRUE) == null) {
            written.accept(entryBytes());
            if (++pendingEntries >= PENDING_LIMIT) {
                flush();
            }
        }
    }

    /** The estimated bytes of the bound id's entry under the backend's current key. */
    private long entryBytes() throws java.io.IOException {
        if (!serialized) {
            return ExactEntrySize.onHeap(id);
        }
        return ExactEntrySize.serialized(id, keyBytes(), prefixBytes);
    }

    /** The current stream key's serialized bytes, serialized once per run of the same key. */
    private int keyBytes() throws java.io.IOException {
        if (fixedKeyBytes > 0) {
            return fixedKeyBytes;
        }
        Object key = currentKey.get();
        if (key != sizedKey) { // identity: a check per entry, a serialization per key change
            if (keyOut == null) {
                keyOut = new DataOutputSerializer(64);
            }
            keyOut.clear();
            keyCopier.serialize(key, keyOut);
            sizedKeyBytes = keyOut.length();
            sizedKey = key;
        }
        return sizedKeyBytes;
    }

    /**
     * Writes the buffered entries to state, one {@code putAll} (one write batch) per (key, slot),
     * restoring the backend's current key; a no-op without the buffer.
     */
    public void flush() throws Exception {
        if (pendingEntries == 0) {
            return;
        }
        Object current = keys.getCurrentKey();
        for (Map.Entry<Pending, Map<String, Boolean>> e : pending.entrySet()) {
            keys.setCurrentKey(e.getKey().key());
            state.setCurrentNamespace(e.getKey().slot());
            state.putAll(e.getValue());
        }
        pending.clear();
        pendingEntries = 0;
        if (current != null) {
            keys.setCurrentKey(current);
        }
    }

    /** Drops every entry of the current key in the slots of {@code slots} (bit s: slot s). */
    public void drop(long slots) {
        for (long rest = slots; rest != 0; rest &= rest - 1) {
            int slot = Long.numberOfTrailingZeros(rest);
            if (pendingEntries > 0) {
                Map<String, Boolean> p = pending.remove(new Pending(keys.getCurrentKey(), slot));
                if (p != null) {
                    pendingEntries -= p.size();
                }
            }
            state.setCurrentNamespace(slot);
            state.clear();
        }
    }

    /** Entries buffered, not yet in state (for tests). */
    int pending() {
        return pendingEntries;
    }
}
