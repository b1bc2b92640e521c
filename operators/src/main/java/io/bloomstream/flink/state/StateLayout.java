package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.Retention;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.TimeMath;
import org.apache.flink.annotation.Internal;

/**
 * How a key's filter state is laid out, shared by the dedup, count and overlap state: the MapState
 * key of a page (generation slot, cascade stage, page index), the time buckets of generations
 * (length L and a per-key phase o: bucket b covers [bL + o, (b+1)L + o)), and the codes of time
 * domains as {@link FilterMeta} records them.
 */
@Internal
public final class StateLayout {

    private StateLayout() {}

    /** The MapState key of page {@code page} of a slot's stage. */
    public static long pageKey(int slot, int stage, long page) {
        return ((long) slot << 40) | ((long) stage << 32) | page;
    }

    public static int slotOf(long pageKey) {
        return (int) (pageKey >>> 40);
    }

    public static int stageOf(long pageKey) {
        return (int) ((pageKey >>> 32) & 0xFF);
    }

    /** A key's bucket phase in [0, L): spreads the keys' rotations over a generation. */
    public static long phaseOf(Object key, long generationMillis) {
        if (generationMillis <= 1) {
            return 0;
        }
        return Math.floorMod(FilterSpec.mix(key.hashCode()), generationMillis);
    }

    public static long bucketOf(long time, FilterMeta meta) {
        if (meta.generationMillis <= 0) {
            return 0;
        }
        long b = Math.floorDiv(TimeMath.minus(time, meta.offset), meta.generationMillis);
        return Math.max(b, FilterMeta.EMPTY + 1); // never the empty slot's marker
    }

    /** The time domain code of a retention (null: none). */
    public static int domainOf(Retention retention) {
        if (retention == null) {
            return FilterMeta.DOMAIN_NONE;
        }
        return retention.timeDomain() == TimeDomain.EVENT_TIME
                ? FilterMeta.DOMAIN_EVENT_TIME
                : FilterMeta.DOMAIN_PROCESSING_TIME;
    }

    /** A time domain code as messages name it. */
    public static String domainName(int domain) {
        switch (domain) {
            case FilterMeta.DOMAIN_NONE:
                return "none (no retention)";
            case FilterMeta.DOMAIN_EVENT_TIME:
                return "EVENT_TIME";
            case FilterMeta.DOMAIN_PROCESSING_TIME:
                return "PROCESSING_TIME";
            default:
                return "unrecorded";
        }
    }
}
