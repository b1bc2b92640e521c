package io.bloomstream.flink.dedup;

import org.apache.flink.annotation.PublicEvolving;

/**
 * Which occurrence of an id {@link BloomDedup} keeps: the first to arrive, or the one with the
 * earliest event time ({@link DedupConfig.Builder#firstBy}).
 */
@PublicEvolving
public enum FirstBy {

    /**
     * The first occurrence to arrive passes at once (the default): no added latency, and the
     * occurrence kept depends on the order of arrival.
     */
    ARRIVAL,

    /**
     * The occurrence with the smallest event time passes, when the watermark reaches its time; of
     * occurrences with equal times the first to arrive. Flink's keep-first deduplication ({@code
     * ROW_NUMBER() OVER (PARTITION BY id ORDER BY rowtime) = 1}), per key (per shard in global
     * mode) and id.
     *
     * <p>An event that is not late (timestamp + {@link DedupConfig#allowedLateness()} after the
     * watermark) waits in keyed state until the watermark reaches its timestamp; then the events of
     * that timestamp are judged in arrival order by the same filter (or, in exact mode, the same
     * exact entries), under the retention if there is one, and the first occurrences leave with
     * their timestamps. A late event goes to the late output, unjudged, and does not mark its id as
     * seen. Latency: until the watermark passes the event; state: the events in flight, plus the
     * filter. Bundles ({@link DedupConfig.Builder#bundle}) do not apply: events are judged at the
     * watermark's timers instead. With allowed lateness A &gt; 0, an event judged late (after the
     * watermark passed its time, within A) is a duplicate of an occurrence judged before it, even
     * of a later one.
     *
     * <p>Needs event time: a retention on {@link io.bloomstream.flink.TimeDomain#EVENT_TIME}, or
     * none (then ids are remembered for ever), and records with timestamps and watermarks (an event
     * without a timestamp goes to the rejected output).
     */
    EVENT_TIME
}
