package io.bloomstream.flink.state;

import io.bloomstream.flink.Retention;
import io.bloomstream.flink.internal.TimeMath;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import org.apache.flink.annotation.Internal;

/**
 * Which retention generations of a key an event consults, which one it is added to, and when a
 * generation expires: pure decisions over a key's {@link FilterMeta}, with no state access, so that
 * they can be tested on their own.
 *
 * <p>Time is cut into buckets of length L = {@link FilterMeta#generationMillis} with a per-key
 * phase (see {@link StateLayout#bucketOf}). An event at t consults every generation holding a
 * bucket that intersects (t - R, t + R), R the retention, so an occurrence whose timestamp is less
 * than R away from a remembered one is always found, whatever the order of arrival, and one at
 * least R + L away never is. A generation expires once no on-time event can consult it: when the
 * watermark (or the clock) reaches the end of its last bucket + R + allowed lateness. Events far
 * ahead of the horizon (the watermark's or the clock's bucket) get generations of their own; a key
 * has at most {@link FilterMetaSerializer#MAX_SLOTS} generations, past which an event joins the
 * generation nearest in time, which then covers a range of buckets (correct, only kept longer).
 */
@Internal
public final class GenerationPolicy {

    /**
     * The most generation slots a key gives to buckets ahead of the horizon; the rest are kept for
     * on-time events (see {@link Retention#MAX_ON_TIME_GENERATIONS}).
     */
    public static final int MAX_FUTURE_SLOTS =
            FilterMetaSerializer.MAX_SLOTS - Retention.MAX_ON_TIME_GENERATIONS;

    /** A generation slot chosen for a bucket that no generation held. */
    public record Opened(int slot, long newExpiry, boolean widened) {}

    private final long retentionMillis;
    private final long latenessMillis;

    /**
     * @param retentionMillis R, 0 without retention
     * @param latenessMillis the allowed lateness of event time, 0 otherwise
     */
    public GenerationPolicy(long retentionMillis, long latenessMillis) {
        this.retentionMillis = retentionMillis;
        this.latenessMillis = latenessMillis;
    }

    /** The first bucket an event at {@code time} consults: that of t - R. */
    public long probeFrom(FilterMeta meta, long time) {
        return meta.generationMillis > 0
                ? StateLayout.bucketOf(TimeMath.minus(time, retentionMillis), meta)
                : StateLayout.bucketOf(time, meta);
    }

    /** The last bucket an event at {@code time} consults: that of t + R - 1. */
    public long probeTo(FilterMeta meta, long time) {
        return meta.generationMillis > 0
                ? StateLayout.bucketOf(
                        TimeMath.minus(TimeMath.plus(time, retentionMillis), 1), meta)
                : StateLayout.bucketOf(time, meta);
    }

    /**
     * When the generation whose last bucket is {@code lastBucket} can be freed: when no on-time
     * event can consult it any more, at the end of that bucket + retention + allowed lateness.
     */
    public long expiryOf(FilterMeta meta, long lastBucket) {
        long end = TimeMath.bucketEnd(lastBucket, meta.generationMillis, meta.offset);
        return TimeMath.plus(TimeMath.plus(end, retentionMillis), latenessMillis);
    }

    /**
     * The slot for a bucket that no generation holds: a free slot, a new one, or past the limit the
     * nearest generation on the same side of the horizon, widened to cover the bucket. Generations
     * ahead of the horizon may take at most {@link #MAX_FUTURE_SLOTS} slots, so a flood of
     * far-future timestamps can never take the slots that on-time events need, and no generation is
     * ever widened across the horizon (which would keep on-time ids until a far-future expiry).
     * Updates {@code meta}'s buckets.
     *
     * @return the slot, with its new expiry when that moved ({@link Long#MIN_VALUE} otherwise)
     */
    public Opened open(FilterMeta meta, long bucket, long horizon) {
        boolean future = bucket > horizon;
        int free = -1;
        int futureSlots = 0;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] == FilterMeta.EMPTY) {
                free = free < 0 ? s : free;
            } else if (meta.buckets[s] > horizon) {
                futureSlots++;
            }
        }
        if (!future || futureSlots < MAX_FUTURE_SLOTS) {
            if (free < 0 && meta.generations() < FilterMetaSerializer.MAX_SLOTS) {
                free = meta.addSlot();
            }
            if (free >= 0) {
                meta.buckets[free] = bucket;
                meta.lastBuckets[free] = bucket;
                long expiry = meta.generationMillis > 0 ? expiryOf(meta, bucket) : Long.MIN_VALUE;
                return new Opened(free, expiry, false);
            }
        }
        int nearest = -1;
        long best = Long.MAX_VALUE;
        for (int s = 0; s < meta.generations(); s++) {
            long first = meta.buckets[s];
            if (first == FilterMeta.EMPTY || (first > horizon) != future) {
                continue;
            }
            long distance =
                    bucket < first
                            ? TimeMath.minus(first, bucket)
                            : TimeMath.minus(bucket, meta.lastBuckets[s]);
            if (distance < best) {
                best = distance;
                nearest = s;
            }
        }
        if (nearest < 0) {
            // Cannot happen while on-time events need fewer slots than the config check allows.
            throw new IllegalStateException(
                    "no generation slot for bucket " + bucket + " of key state " + meta);
        }
        if (bucket < meta.buckets[nearest]) {
            meta.buckets[nearest] = bucket;
            return new Opened(nearest, Long.MIN_VALUE, true);
        }
        meta.lastBuckets[nearest] = bucket;
        return new Opened(nearest, expiryOf(meta, bucket), true);
    }

    /** The slots (a bit set) of the generations that have expired at {@code time}. */
    public long expiredAt(FilterMeta meta, long time) {
        long expired = 0;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] != FilterMeta.EMPTY
                    && expiryOf(meta, meta.lastBuckets[s]) <= time) {
                expired |= 1L << s;
            }
        }
        return expired;
    }

    /** The expiry times of the generations still live at {@code time}. */
    public long[] liveExpiries(FilterMeta meta, long time) {
        long[] left = new long[meta.generations()];
        int live = 0;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] != FilterMeta.EMPTY) {
                long expiry = expiryOf(meta, meta.lastBuckets[s]);
                if (expiry > time) {
                    left[live++] = expiry;
                }
            }
        }
        return java.util.Arrays.copyOf(left, live);
    }
}
