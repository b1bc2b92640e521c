package io.bloomstream.flink.internal;

import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/**
 * The largest watermark an event-time operator has judged with, kept in operator state ({@link
 * #STATE}, a union list). Flink does not checkpoint watermarks: a restored task sees {@code
 * Long.MIN_VALUE} until its input's next one, so an event that was late before a failure (its
 * window emitted, its generation freed) would be judged as on time when replayed in that gap.
 * Operators judge lateness against {@link #advance} instead of the current watermark.
 *
 * <p>After a restore the floor is the largest of the old subtasks' (the subtasks of a keyed
 * operator see the same watermarks; after a rescale an event may turn late slightly early, never be
 * judged after its state was freed). State written before 0.5 has none and restores as before.
 */
@Internal
public final class WatermarkFloor {

    /** The operator state's name. */
    public static final String STATE = "bloom-watermark";

    private long floor = Long.MIN_VALUE;
    private ListState<Long> state;

    /** Registers the state, and on a restore takes the largest watermark of every old subtask. */
    public void initialize(FunctionInitializationContext context) throws Exception {
        state =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(STATE, LongSerializer.INSTANCE));
        if (context.isRestored()) {
            for (Long w : state.get()) {
                floor = Math.max(floor, w);
            }
        }
    }

    /** Records {@code currentWatermark} and returns the watermark to judge lateness against. */
    public long advance(long currentWatermark) {
        floor = Math.max(floor, currentWatermark);
        return floor;
    }

    /** Writes the floor into the operator state; call from {@code snapshotState}. */
    public void snapshot() throws Exception {
        state.update(List.of(floor));
    }
}
