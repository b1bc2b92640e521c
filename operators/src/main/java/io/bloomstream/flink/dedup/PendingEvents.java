package io.bloomstream.flink.dedup;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.internal.InternalListState;

/**
 * The events of {@link FirstBy#EVENT_TIME} that wait for the watermark, per key: a keyed {@code
 * ListState<T>} ({@link DedupFunction#PENDING_STATE}, part of the savepoint contract) whose
 * namespace is the event time ({@code LongSerializer}), holding the events of that time in arrival
 * order, serialized with the input type's serializer, as Flink's window operators keep a window's
 * elements. An arriving event is an append: on RocksDB a merge, with no read (a {@code
 * MapState<Long, List<T>>} would read the list first, and for a new time that read misses through
 * every level; benchmarks/RESULTS.md, issue 40). Under object reuse an event is copied before it is
 * kept, since the input may reuse its object.
 *
 * @param <T> the event type
 */
@Internal
final class PendingEvents<T> {

    private final InternalListState<?, Long, T> state;

    /** Copies events whose object the input may reuse (object reuse on); null otherwise. */
    private final TypeSerializer<T> copier;

    private PendingEvents(InternalListState<?, Long, T> state, TypeSerializer<T> copier) {
        this.state = state;
        this.copier = copier;
    }

    /**
     * Opens the state in {@code backend} (the operator's: a runtime context gives no namespaces).
     *
     * @param serializer the input type's serializer
     * @param objectReuse whether the input may reuse an event's object once it was processed
     */
    @SuppressWarnings("unchecked")
    static <T> PendingEvents<T> open(
            KeyedStateBackend<?> backend, TypeSerializer<T> serializer, boolean objectReuse)
            throws Exception {
        return new PendingEvents<>(
                (InternalListState<?, Long, T>)
                        backend.getOrCreateKeyedState(
                                LongSerializer.INSTANCE, descriptor(serializer)),
                objectReuse ? serializer : null);
    }

    /** The state's descriptor for events of {@code serializer}. */
    static <T> ListStateDescriptor<T> descriptor(TypeSerializer<T> serializer) {
        return new ListStateDescriptor<>(DedupFunction.PENDING_STATE, serializer);
    }

    /** Adds an event of {@code time} of the current key after those already waiting. */
    void add(long time, T event) throws Exception {
        state.setCurrentNamespace(time);
        state.add(copier == null ? event : copier.copy(event));
    }

    /** Removes and returns the events of {@code time}, in arrival order, or null if none wait. */
    List<T> take(long time) throws Exception {
        state.setCurrentNamespace(time);
        Iterable<T> waiting = state.get();
        if (waiting == null) {
            return null;
        }
        List<T> events = new ArrayList<>();
        waiting.forEach(events::add);
        state.clear();
        return events.isEmpty() ? null : events;
    }
}
