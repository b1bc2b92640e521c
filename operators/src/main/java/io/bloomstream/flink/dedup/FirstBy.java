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
     * ROW_NUMBER() OVER (PARTITION BY id ORDER BY rowtime) = 1}). Events wait in keyed state until
     * the watermark passes them; a late event (see {@link DedupConfig#allowedLateness()}) goes to
     * the late output and does not mark its id as seen. Needs event time: a retention on {@link
     * io.bloomstream.flink.TimeDomain#EVENT_TIME}, or none (then ids are remembered for ever), and
     * events with timestamps and watermarks.
     */
    EVENT_TIME
}
