package io.bloomstream.flink;

import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.state.ExactKeys;
import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.util.function.SerializableFunction;

/**
 * Extracts the id of an event and hashes it. Ids are strings (hashed as UTF-8), byte arrays or
 * longs, or, without hashing their bytes, UUIDs ({@link #ofUuid}) and any 128 bits the pipeline
 * already has ({@link #ofBits128}); a null id, an empty string or an empty byte array is a bad
 * event: {@link #hash} returns null and the operator counts it and sends it to the rejected side
 * output.
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
            public boolean hash64(T event, Hasher hasher, long[] out) {
                String s = id.apply(event);
                if (s == null || s.isEmpty()) {
                    return false;
                }
                out[0] = hasher.hash64(s);
                return true;
            }

            @Override
            public String exactKey(T event) {
                String s = id.apply(event);
                return s == null || s.isEmpty() ? null : ExactKeys.ofString(s);
            }

            @Override
            public long shardHash(T event) {
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
            public boolean hash64(T event, Hasher hasher, long[] out) {
                byte[] b = id.apply(event);
                if (b == null || b.length == 0) {
                    return false;
                }
                out[0] = hasher.hash64(b, 0, b.length);
                return true;
            }

            @Override
            public String exactKey(T event) {
                byte[] b = id.apply(event);
                return b == null || b.length == 0 ? null : ExactKeys.ofBytes(b);
            }

            @Override
            public long shardHash(T event) {
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
            public boolean hash64(T event, Hasher hasher, long[] out) {
                Long v = id.apply(event);
                if (v == null) {
                    return false;
                }
                out[0] = hasher.hash64(v.longValue());
                return true;
            }

            @Override
            public String exactKey(T event) {
                Long v = id.apply(event);
                return v == null ? null : ExactKeys.ofLong(v);
            }

            @Override
            public long shardHash(T event) {
                Long v = id.apply(event);
                return v == null ? 0 : v;
            }
        };
    }

    /**
     * Ids that are UUIDs, taken as their two longs with no byte encoding: the 128 bits are mixed
     * with the config's seed by SplitMix64 finalizers (a few nanoseconds, no allocation beyond the
     * result). Time-ordered UUIDs (v1, v7) are fine: the mixing spreads their shared bits. A null
     * UUID is a bad event.
     *
     * <p>The filter bits differ from those of {@link #ofString} over the UUID's text: switching an
     * existing job between the two forgets every id seen, like a change of seed.
     */
    public static <T> IdSelector<T> ofUuid(SerializableFunction<T, java.util.UUID> id) {
        return new IdSelector<T>() {
            private static final long serialVersionUID = 1L;

            @Override
            public Hash128 hash(T event, Hasher hasher) {
                java.util.UUID u = id.apply(event);
                return u == null
                        ? null
                        : mix128(
                                u.getMostSignificantBits(),
                                u.getLeastSignificantBits(),
                                hasher.seed());
            }

            @Override
            public boolean hash64(T event, Hasher hasher, long[] out) {
                java.util.UUID u = id.apply(event);
                if (u == null) {
                    return false;
                }
                out[0] =
                        mix64(
                                u.getMostSignificantBits(),
                                u.getLeastSignificantBits(),
                                hasher.seed());
                return true;
            }

            @Override
            public String exactKey(T event) {
                java.util.UUID u = id.apply(event);
                return u == null
                        ? null
                        : ExactKeys.ofBits128(
                                u.getMostSignificantBits(), u.getLeastSignificantBits());
            }

            @Override
            public long shardHash(T event) {
                java.util.UUID u = id.apply(event);
                return u == null ? 0 : u.getMostSignificantBits() ^ u.getLeastSignificantBits();
            }
        };
    }

    /**
     * The public way to bring ids of any kind: {@code id} returns 128 bits that already identify
     * the id (a hash the pipeline computed upstream, two longs of a composite key, a UUID's halves)
     * or null for a bad event. They are mixed with the config's seed as in {@link #ofUuid}, so they
     * need not be uniformly distributed, but they must be injective on the ids the job must tell
     * apart: two ids with the same 128 bits are one id. Only ids whose 128 bits are equal collide;
     * the filter's false-positive rate is otherwise the configured one.
     */
    public static <T> IdSelector<T> ofBits128(SerializableFunction<T, Hash128> id) {
        return new IdSelector<T>() {
            private static final long serialVersionUID = 1L;

            @Override
            public Hash128 hash(T event, Hasher hasher) {
                Hash128 h = id.apply(event);
                return h == null ? null : mix128(h.h1(), h.h2(), hasher.seed());
            }

            @Override
            public boolean hash64(T event, Hasher hasher, long[] out) {
                Hash128 h = id.apply(event);
                if (h == null) {
                    return false;
                }
                out[0] = mix64(h.h1(), h.h2(), hasher.seed());
                return true;
            }

            @Override
            public String exactKey(T event) {
                Hash128 h = id.apply(event);
                return h == null ? null : ExactKeys.ofBits128(h.h1(), h.h2());
            }

            @Override
            public long shardHash(T event) {
                Hash128 h = id.apply(event);
                return h == null ? 0 : h.h1() ^ h.h2();
            }
        };
    }

    /**
     * 128 bits mixed with a seed: each half goes through a SplitMix64 finalizer together with the
     * other half, so every output bit depends on all input bits and the seed.
     */
    static Hash128 mix128(long hi, long lo, long seed) {
        long a = io.bloomstream.filter.FilterSpec.mix(hi ^ seed);
        long b = io.bloomstream.filter.FilterSpec.mix(lo ^ Long.rotateLeft(seed, 32) ^ a);
        return new Hash128(io.bloomstream.filter.FilterSpec.mix(a ^ Long.rotateLeft(b, 29)), b);
    }

    /** The first half of {@link #mix128}, without allocating: the 64-bit hash of 128 bits. */
    static long mix64(long hi, long lo, long seed) {
        long a = io.bloomstream.filter.FilterSpec.mix(hi ^ seed);
        long b = io.bloomstream.filter.FilterSpec.mix(lo ^ Long.rotateLeft(seed, 32) ^ a);
        return io.bloomstream.filter.FilterSpec.mix(a ^ Long.rotateLeft(b, 29));
    }

    /**
     * The 64-bit hash of the event's id under a 64-bit hasher ({@link Hasher#is64Bit()}), written
     * to {@code out[0]} without allocating (strings through {@link Hasher#hash64(CharSequence)},
     * byte arrays and longs through the other {@code hash64} methods, UUIDs and 128-bit ids through
     * the first half of their {@link #ofUuid} mixing), or false when the event has no usable id
     * (then {@code out} is unchanged). Public only for the operators' packages.
     *
     * @throws IllegalStateException if the hasher is not 64-bit
     * @throws RuntimeException whatever the user's id function throws
     */
    @Internal
    public abstract boolean hash64(T event, Hasher hasher, long[] out);

    /**
     * The hash of the event's id, or null when the event has no usable id.
     *
     * @throws RuntimeException whatever the user's id function throws
     */
    public abstract Hash128 hash(T event, Hasher hasher);

    /**
     * A cheap, deterministic value of the id for choosing its shard in global mode (equal ids give
     * equal values; bad ids give 0). It is independent of {@link #hash}, which chooses the page
     * inside the shard, and is part of the savepoint contract of global mode. Public only for the
     * operators' packages (the constructor is private: no user subclass can exist).
     */
    @Internal
    public abstract long shardHash(T event);

    /**
     * The id itself as exact mode stores it ({@link ExactKeys}), or null when the event has no
     * usable id (as {@link #hash} returns null). Public only for the operators' packages.
     *
     * @throws RuntimeException whatever the user's id function throws
     */
    @Internal
    public abstract String exactKey(T event);
}
