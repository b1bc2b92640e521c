package io.bloomstream.flink;

import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import java.io.Serializable;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.util.function.SerializableFunction;

/**
 * Extracts the id of an event and hashes it. Ids are strings (hashed as UTF-8), byte arrays or
 * longs; a null id, an empty string or an empty byte array is a bad event: {@link #hash} returns
 * null and the operator counts it and sends it to the rejected side output.
 *
 * @param <T> the event type
 */
@PublicEvolving
public abstract class IdSelector<T> implements Serializable {

    private static final long serialVersionUID = 1L;

    private IdSelector() {}

    /** Ids that are strings. */
    public static <T> IdSelector<T> ofString(SerializableFunction<T, String> id) {
        return new IdSelector<T>() {
            private static final long serialVersionUID = 1L;

            @Override
            public Hash128 hash(T event, Hasher hasher) {
                String s = id.apply(event);
                return s == null || s.isEmpty() ? null : hasher.hash(s);
            }

            @Override
            long shardHash(T event) {
                String s = id.apply(event);
                return s == null ? 0 : s.hashCode(); // cached by String, specified by the JLS
            }
        };
    }

    /** Ids that are byte arrays. */
    public static <T> IdSelector<T> ofBytes(SerializableFunction<T, byte[]> id) {
        return new IdSelector<T>() {
            private static final long serialVersionUID = 1L;

            @Override
            public Hash128 hash(T event, Hasher hasher) {
                byte[] b = id.apply(event);
                return b == null || b.length == 0 ? null : hasher.hash(b);
            }

            @Override
            long shardHash(T event) {
                byte[] b = id.apply(event);
                return b == null ? 0 : java.util.Arrays.hashCode(b);
            }
        };
    }

    /** Ids that are longs (a null {@code Long} is a bad event). */
    public static <T> IdSelector<T> ofLong(SerializableFunction<T, Long> id) {
        return new IdSelector<T>() {
            private static final long serialVersionUID = 1L;

            @Override
            public Hash128 hash(T event, Hasher hasher) {
                Long v = id.apply(event);
                return v == null ? null : hasher.hash(v);
            }

            @Override
            long shardHash(T event) {
                Long v = id.apply(event);
                return v == null ? 0 : v;
            }
        };
    }

    /**
     * The hash of the event's id, or null when the event has no usable id.
     *
     * @throws RuntimeException whatever the user's id function throws
     */
    public abstract Hash128 hash(T event, Hasher hasher);

    /**
     * A cheap, deterministic value of the id for choosing its shard in global mode (equal ids give
     * equal values; bad ids give 0). It is independent of {@link #hash}, which chooses the page
     * inside the shard, and is part of the savepoint contract of global mode.
     */
    abstract long shardHash(T event);
}
