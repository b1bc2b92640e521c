package io.bloomstream.jobs.tools;

import java.util.Objects;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * The type of a savepoint's keys as the savepoint wrote them: its serializer is the one restored
 * from the savepoint's own key serializer snapshot, so Flink's check of the reader's key serializer
 * against the savepoint's always passes, whatever the key's columns are. For reading only.
 */
final class SavedSerializerTypeInfo<T> extends TypeInformation<T> {

    private static final long serialVersionUID = 1L;

    private final TypeSerializer<T> serializer;
    private final Class<T> typeClass;

    SavedSerializerTypeInfo(TypeSerializer<T> serializer, Class<T> typeClass) {
        this.serializer = serializer;
        this.typeClass = typeClass;
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
    public Class<T> getTypeClass() {
        return typeClass;
    }

    @Override
    public boolean isKeyType() {
        return true;
    }

    @Override
    public TypeSerializer<T> createSerializer(SerializerConfig config) {
        return serializer.duplicate();
    }

    @Override
    public String toString() {
        return "saved key type (" + serializer.getClass().getSimpleName() + ")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SavedSerializerTypeInfo
                && serializer.equals(((SavedSerializerTypeInfo<?>) o).serializer);
    }

    @Override
    public int hashCode() {
        return Objects.hash(serializer);
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof SavedSerializerTypeInfo;
    }
}
