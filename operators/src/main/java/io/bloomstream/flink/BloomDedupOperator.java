package io.bloomstream.flink;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;

/**
 * Runs a {@link BloomDedupFunction} with its write-back cache of filter state (see {@link
 * KeyCache}): the operator lends the function its key context, so the cache can write keys back
 * under their own key, and flushes the cache before every checkpoint barrier (checkpoints,
 * savepoints, the final checkpoint at end of input), so snapshots hold exactly what a write-through
 * operator would have written. Timers and state names are those of {@link KeyedProcessOperator}, so
 * savepoints of either operator restore into the other.
 *
 * @param <K> the key type
 * @param <T> the event type
 */
@Internal
public final class BloomDedupOperator<K, T> extends KeyedProcessOperator<K, T, T> {

    private static final long serialVersionUID = 1L;

    private final BloomDedupFunction<K, T> function;

    BloomDedupOperator(BloomDedupFunction<K, T> function) {
        super(function);
        this.function = function;
    }

    @Override
    public void open() throws Exception {
        function.useKeyContext(this);
        super.open();
    }

    /**
     * Flushes the cache into keyed state before the state backends take their snapshot (this runs
     * first in every checkpoint and savepoint, synchronously, after the barrier's records).
     */
    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        function.flush();
        super.snapshotState(context);
    }

    /** The write-back cache, or null when it is off (for tests). */
    KeyCache cache() {
        return function.cache();
    }

    /** Writes the cache's changes to keyed state now (as a snapshot would). */
    void flush() throws Exception {
        function.flush();
    }

    @Override
    public void finish() throws Exception {
        function.flush();
        super.finish();
    }
}
