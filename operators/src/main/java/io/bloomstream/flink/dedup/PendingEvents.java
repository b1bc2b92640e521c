package io.bloomstream.flink.dedup;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.ListTypeInfo;

/**
 * The events of {@link FirstBy#EVENT_TIME} that wait for the watermark, per key: a keyed {@code
 * MapState<Long, List<T>>} from event time to the events of that time in arrival order ({@link
 * DedupFunction#PENDING_STATE}, part of the savepoint contract; the list serialized by Flink's
 * {@code ListSerializer} over the input type's serializer). A stored list is never changed in
 * place, since the heap backend's asynchronous snapshots share it, and under object reuse an event
 * is copied before it is kept, since the input may reuse its object.
 *
 * @param <T> the event type
 */
@Internal
final class PendingEvents<T> {

    private final MapState<Long, List<T>> state;

    /** Copies events whose object the input may reuse (object reuse on); null otherwise. */
    private final TypeSerializer<T> copier;

    PendingEvents(MapState<Long, List<T>> state, TypeSerializer<T> copier) {
        this.state = state;
        this.copier = copier;
    }

    /** The state's descriptor for events of {@code type}. */
    static <T> MapStateDescriptor<Long, List<T>> descriptor(TypeInformation<T> type) {
        return new MapStateDescriptor<>(
                DedupFunction.PENDING_STATE, Types.LONG, new ListTypeInfo<>(type));
    }

    /** Adds an event of {@code time} after those of the same time already waiting. */
    void add(long time, T event) throws Exception {
        List<T> waiting = state.get(time);
        List<T> events = new ArrayList<>(waiting == null ? 1 : waiting.size() + 1);
        if (waiting != null) {
            events.addAll(waiting);
        }
        events.add(copier == null ? event : copier.copy(event));
        state.put(time, events);
    }

    /** Removes and returns the events of {@code time}, in arrival order, or null if none wait. */
    List<T> take(long time) throws Exception {
        List<T> events = state.get(time);
        if (events != null) {
            state.remove(time);
        }
        return events;
    }
}
