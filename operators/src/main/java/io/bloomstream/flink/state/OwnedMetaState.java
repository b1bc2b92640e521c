package io.bloomstream.flink.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ValueState;

/**
 * A {@link FilterMeta} value state whose {@link #value()} the caller owns: no one else reads or
 * changes the returned object behind the caller's back, so the caller may change it in place and
 * pass the same object to {@link #update}, which keeps it (or its serialized form) as given. A
 * Flink {@code ValueState} on the heap backend is not such a state (its values are shared with
 * asynchronous snapshots), so its callers copy; a view that deserializes, or hands out its own
 * write-through cache's object, is.
 *
 * <p>A caller that changes the object must call {@link #update} with it before its call returns; if
 * it fails in between, the task fails and the object is discarded with its owner.
 */
@Internal
public interface OwnedMetaState extends ValueState<FilterMeta> {

    /**
     * An {@link #update} after which only stages' item counts ({@link FilterMeta.Stage#itemsAdded})
     * differ from the object last passed to {@link #update} or returned by {@link #value()}. A
     * state may defer writing it, if whatever reads the metadata back from state afterwards counts
     * every deferred item (an upper bound: a stage that counts more items than it holds fills
     * early, which keeps its false-positive rate within the bound, never above it). By default it
     * writes.
     */
    default void updateCounts(FilterMeta meta) throws java.io.IOException {
        update(meta);
    }
}
