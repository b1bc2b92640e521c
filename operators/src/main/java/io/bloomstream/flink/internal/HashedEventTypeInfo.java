package io.bloomstream.flink.internal;

import java.io.IOException;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The type of {@link HashedEvent}: the hash (8 bytes), whether it is valid (1 byte), then the event
 * by its own serializer. On the wire only (never in state).
 *
 * @param <T> the event type
 */
@Internal
public final class HashedEventTypeInfo<T> extends TypeInformation<HashedEvent<T>> {

    private static final long serialVersionUID = 1L;

    private final TypeInformation<T> eventType;

    public HashedEventTypeInfo(TypeInformation<T> eventType) {
        this.eventType = Objects.requireNonNull(eventType, "eventType");
    }

    /** The event's type. */
    public TypeInformation<T> eventType() {
        return eventType;
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Class<HashedEvent<T>> getTypeClass() {
        return (Class<HashedEvent<T>>) (Class<?>) HashedEvent.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<HashedEvent<T>> createSerializer(SerializerConfig config) {
        return new Serializer<>(eventType.createSerializer(config));
    }

    @Override
    public String toString() {
        return "HashedEvent<" + eventType + ">";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HashedEventTypeInfo<?> t && t.eventType.equals(eventType);
    }

    @Override
    public int hashCode() {
        return 31 * eventType.hashCode() + 7;
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof HashedEventTypeInfo;
    }

    /** The serializer of {@link HashedEvent}: hash, valid, event. */
    public static final class Serializer<T> extends TypeSerializer<HashedEvent<T>> {
        private static final long serialVersionUID = 1L;

        private final TypeSerializer<T> events;

        public Serializer(TypeSerializer<T> events) {
            this.events = Objects.requireNonNull(events, "events");
        }

        /** The event's serializer. */
        public TypeSerializer<T> events() {
            return events;
        }

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public TypeSerializer<HashedEvent<T>> duplicate() {
            TypeSerializer<T> d = events.duplicate();
            return d == events ? this : new Serializer<>(d);
        }

        @Override
        public HashedEvent<T> createInstance() {
            return new HashedEvent<>(0, false, events.createInstance());
        }

        @Override
        public HashedEvent<T> copy(HashedEvent<T> from) {
            return new HashedEvent<>(from.hash, from.valid, events.copy(from.value));
        }

        @Override
        public HashedEvent<T> copy(HashedEvent<T> from, HashedEvent<T> reuse) {
            return copy(from);
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(HashedEvent<T> record, DataOutputView target) throws IOException {
            target.writeLong(record.hash);
            target.writeBoolean(record.valid);
            events.serialize(record.value, target);
        }

        @Override
        public HashedEvent<T> deserialize(DataInputView source) throws IOException {
            long hash = source.readLong();
            boolean valid = source.readBoolean();
            return new HashedEvent<>(hash, valid, events.deserialize(source));
        }

        @Override
        public HashedEvent<T> deserialize(HashedEvent<T> reuse, DataInputView source)
                throws IOException {
            return deserialize(source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            target.writeLong(source.readLong());
            target.writeBoolean(source.readBoolean());
            events.copy(source, target);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Serializer<?> s && s.events.equals(events);
        }

        @Override
        public int hashCode() {
            return 31 * events.hashCode() + 7;
        }

        @Override
        public TypeSerializerSnapshot<HashedEvent<T>> snapshotConfiguration() {
            return new Snapshot<>(this);
        }
    }

    /** The snapshot of {@link Serializer}: the event serializer's. */
    public static final class Snapshot<T>
            extends CompositeTypeSerializerSnapshot<HashedEvent<T>, Serializer<T>> {

        public Snapshot() {}

        Snapshot(Serializer<T> serializer) {
            super(serializer);
        }

        @Override
        protected int getCurrentOuterSnapshotVersion() {
            return 1;
        }

        @Override
        protected TypeSerializer<?>[] getNestedSerializers(Serializer<T> outer) {
            return new TypeSerializer<?>[] {outer.events};
        }

        @Override
        @SuppressWarnings("unchecked")
        protected Serializer<T> createOuterSerializerWithNestedSerializers(
                TypeSerializer<?>[] nested) {
            return new Serializer<>((TypeSerializer<T>) nested[0]);
        }
    }
}
