package io.bloomstream.flink.dedup;

/**
 * The hash of the event the dedup function is about to judge: (h1, h2), h2 = h1 under a 64-bit
 * hasher, or not valid when the event has no usable id; in exact mode also the id's exact key.
 * {@link DedupOperator} computes it once per event (it also gives global mode its shard), and the
 * function reads it.
 */
final class EventHash {
    boolean valid;
    final long[] h = new long[2];

    /** Exact mode: the id's exact key ({@code ExactKeys}); null otherwise. */
    String exact;

    /** The record it was computed for (identity), or null. */
    Object of;
}
