package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;

/**
 * Saturating arithmetic on millisecond timestamps: event timestamps may be anywhere in the range of
 * a long (a far-future or corrupt timestamp must not wrap around and expire live state).
 */
@Internal
public final class TimeMath {

    private TimeMath() {}

    public static long plus(long time, long millis) {
        long r = time + millis;
        if (((time ^ r) & (millis ^ r)) < 0) {
            return millis > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
        return r;
    }

    public static long minus(long time, long millis) {
        long r = time - millis;
        if (((time ^ millis) & (time ^ r)) < 0) {
            return millis > 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** The last millisecond of bucket b of length L and phase o: (b + 1) L + o - 1, saturated. */
    public static long bucketEnd(long bucket, long length, long offset) {
        long next;
        try {
            next = Math.multiplyExact(Math.addExact(bucket, 1), length);
        } catch (ArithmeticException e) {
            return bucket < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return minus(plus(next, offset), 1);
    }
}
