package io.bloomstream.flink.internal;

import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.IdSelector;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;

/**
 * An event with its id's 64-bit hash, made once where the event is read and carried across global
 * mode's shard {@code keyBy} to the dedup operator, which judges by it instead of hashing the id
 * again (the key selector routes by the same hash: {@link Shards.Selector}). Only on the wire
 * between the two: the dedup operator takes the event out before judging it, and its outputs and
 * state hold the events alone.
 *
 * @param <T> the event type
 */
@Internal
public final class HashedEvent<T> {

    /** The id's hash under the config's 64-bit hasher; meaningless unless {@link #valid}. */
    public long hash;

    /** Whether the event has a usable id (not null or empty). */
    public boolean valid;

    /** The event. */
    public T value;

    public HashedEvent() {}

    public HashedEvent(long hash, boolean valid, T value) {
        this.hash = hash;
        this.valid = valid;
        this.value = value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HashedEvent<?> e
                && e.hash == hash
                && e.valid == valid
                && Objects.equals(e.value, value);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hash) * 31 + Objects.hashCode(value);
    }

    @Override
    public String toString() {
        return "HashedEvent{" + (valid ? Long.toHexString(hash) : "no id") + ", " + value + "}";
    }

    /**
     * Hashes each event's id under a 64-bit hasher (the config's strategy and seed), as the dedup
     * function would: chained to the operator before the shard {@code keyBy}.
     */
    public static final class Hash<T>
            implements MapFunction<T, HashedEvent<T>>, ResultTypeQueryable<HashedEvent<T>> {
        private static final long serialVersionUID = 1L;

        private final IdSelector<T> id;
        private final long seed;
        private final TypeInformation<HashedEvent<T>> type;
        private transient Hasher hasher;
        private transient long[] scratch;

        /**
         * @param hasher the dedup config's hasher, 64-bit ({@link Hasher#is64Bit()})
         */
        public Hash(IdSelector<T> id, Hasher hasher, TypeInformation<T> eventType) {
            if (!hasher.is64Bit()) {
                throw new IllegalArgumentException("a hash is carried under a 64-bit hasher only");
            }
            this.id = Objects.requireNonNull(id, "id");
            this.seed = hasher.seed();
            this.type = new HashedEventTypeInfo<>(eventType);
        }

        @Override
        public HashedEvent<T> map(T event) {
            if (hasher == null) {
                hasher = Hasher.xxh3_64(seed); // deriving XXH3's secret: once
                scratch = new long[1];
            }
            boolean valid = id.hash64(event, hasher, scratch);
            return new HashedEvent<>(valid ? scratch[0] : 0, valid, event);
        }

        @Override
        public TypeInformation<HashedEvent<T>> getProducedType() {
            return type;
        }
    }
}
