package io.bloomstream.jobs.io;

import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** The type information of {@link Parsed}: its own serializer ({@link ParsedSerializer}). */
public final class ParsedTypeInfo extends TypeInformation<Parsed> {

    private static final long serialVersionUID = 1L;

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
    public Class<Parsed> getTypeClass() {
        return Parsed.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<Parsed> createSerializer(SerializerConfig config) {
        return new ParsedSerializer();
    }

    @Override
    public String toString() {
        return "Parsed";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ParsedTypeInfo;
    }

    @Override
    public int hashCode() {
        return ParsedTypeInfo.class.hashCode();
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof ParsedTypeInfo;
    }
}
