package io.bloomstream.flink.internal;

import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.IdSelector;
import org.apache.flink.annotation.Internal;

/**
 * An event's id hashed as the operators' filters take it: the pair (h1, h2) that {@link
 * io.bloomstream.filter.FilterSpec} turns into a page and bit positions.
 */
@Internal
public final class IdHashes {

    private IdHashes() {}

    /**
     * Writes the hash (h1, h2) of {@code event}'s id under {@code hasher} to {@code out[0..2)}:
     * under a 64-bit hasher ({@link Hasher#is64Bit()}) its one hash twice, computed without
     * allocating; else the two halves of the 128-bit hash.
     *
     * @return false for an event without a usable id (null or empty); {@code out} is then undefined
     */
    public static <T> boolean hashInto(IdSelector<T> ids, T event, Hasher hasher, long[] out) {
        if (hasher.is64Bit()) {
            if (!ids.hash64(event, hasher, out)) {
                return false;
            }
            out[1] = out[0];
            return true;
        }
        Hash128 h = ids.hash(event, hasher);
        if (h == null) {
            return false;
        }
        out[0] = h.h1();
        out[1] = h.h2();
        return true;
    }
}
