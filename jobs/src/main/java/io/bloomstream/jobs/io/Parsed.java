package io.bloomstream.jobs.io;

/**
 * An input record after parsing: the raw line, the key (null when unkeyed) and the values of the
 * fields a command asked for, in order. A POJO (no Kryo).
 */
public class Parsed {
    /** The type information of records (Flink's POJO serializer). */
    public static final org.apache.flink.api.common.typeinfo.TypeInformation<Parsed> TYPE =
            org.apache.flink.api.common.typeinfo.Types.POJO(Parsed.class);

    /** The line as read. */
    public String raw;

    /** The key field's value, or null. */
    public String key;

    /** The requested fields' values, in the order asked for (text format: the line). */
    public String[] values;

    /** For Flink's POJO serializer. */
    public Parsed() {}

    /** A parsed record. */
    public Parsed(String raw, String key, String[] values) {
        this.raw = raw;
        this.key = key;
        this.values = values;
    }

    @Override
    public String toString() {
        return raw;
    }
}
