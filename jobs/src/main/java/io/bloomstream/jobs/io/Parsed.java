package io.bloomstream.jobs.io;

/**
 * An input record after parsing: the raw line, the key (null when unkeyed) and the values of the
 * fields a command asked for, in order. Immutable: nothing changes a record (or its values) once
 * made, so Flink passes it between chained operators without a copy. Passed between operators by
 * {@link ParsedSerializer}, never kept in state.
 */
@org.apache.flink.api.common.typeinfo.TypeInfo(Parsed.TypeFactory.class)
public class Parsed {
    /** The type information of records ({@link ParsedSerializer}). */
    public static final org.apache.flink.api.common.typeinfo.TypeInformation<Parsed> TYPE =
            new ParsedTypeInfo();

    /** The line as read. */
    public final String raw;

    /** The key field's value, or null. */
    public final String key;

    /** The requested fields' values, in the order asked for (text format: the line). */
    public final String[] values;

    /** A parsed record. */
    public Parsed(String raw, String key, String[] values) {
        this.raw = raw;
        this.key = key;
        this.values = values;
    }

    /** Gives Flink's type extraction {@link ParsedTypeInfo} wherever a function returns Parsed. */
    public static final class TypeFactory
            extends org.apache.flink.api.common.typeinfo.TypeInfoFactory<Parsed> {
        @Override
        public org.apache.flink.api.common.typeinfo.TypeInformation<Parsed> createTypeInfo(
                java.lang.reflect.Type type,
                java.util.Map<String, org.apache.flink.api.common.typeinfo.TypeInformation<?>>
                        generics) {
            return TYPE;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Parsed p
                && java.util.Objects.equals(raw, p.raw)
                && java.util.Objects.equals(key, p.key)
                && java.util.Arrays.equals(values, p.values);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(raw, key, java.util.Arrays.hashCode(values));
    }

    @Override
    public String toString() {
        return raw;
    }
}
