package io.bloomstream.flink.typeutils;

import io.bloomstream.flink.state.FilterMeta;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * The type of a key's filter metadata ({@code bloom-meta} of a dedup, {@code bloom-count-meta} of a
 * count): its serializer is {@link FilterMetaSerializer}, the one every savepoint records, so state
 * declared with this type restores as is (no Kryo, no migration). For tools that read or write that
 * state from outside the operator: the State Processor API, the SQL {@code savepoint} connector
 * ({@link FilterMetaTypeFactory}).
 */
@PublicEvolving
public final class FilterMetaTypeInfo extends TypeInformation<FilterMeta> {

    private static final long serialVersionUID = 1L;

    /** The shared instance (the type has no parameters). */
    public static final FilterMetaTypeInfo INSTANCE = new FilterMetaTypeInfo();

    private FilterMetaTypeInfo() {}

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
    public Class<FilterMeta> getTypeClass() {
        return FilterMeta.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<FilterMeta> createSerializer(SerializerConfig config) {
        return FilterMetaSerializer.INSTANCE;
    }

    @Override
    public String toString() {
        return "FilterMeta";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FilterMetaTypeInfo;
    }

    @Override
    public int hashCode() {
        return FilterMetaTypeInfo.class.hashCode();
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof FilterMetaTypeInfo;
    }

    /** Keeps Java serialization of the singleton a singleton. */
    private Object readResolve() {
        return INSTANCE;
    }
}
