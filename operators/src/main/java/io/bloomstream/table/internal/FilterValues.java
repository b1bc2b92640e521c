package io.bloomstream.table.internal;

import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.filter.FilterReader;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Normalization;
import java.util.Arrays;
import org.apache.flink.annotation.Internal;

/**
 * Filters given as BYTES values, decoded once: a query usually passes the same filter on every row
 * (a scalar subquery, a join with a one-row table), so the last few are kept by content. Not
 * thread-safe (one per function instance, that is per task).
 */
@Internal
public final class FilterValues {

    /** A decoded filter value: its file view (filter, normalization) and a reader of it. */
    public record Decoded(FilterFile file, FilterReader reader) {

        /**
         * Whether {@code value} might be in the filter: a STRING is first normalized as the filter
         * records (a value unusable under it was never added: false).
         */
        public boolean mightContain(Object value) {
            return mightContain(reader, file.normalization(), value);
        }

        public static boolean mightContain(FilterReader reader, Normalization n, Object value) {
            Object v = value;
            if (n != null && value instanceof String s) {
                v = n.apply(s);
                if (v == null) {
                    return false;
                }
            }
            Hash128 h = SqlArguments.hash(reader.filter().hasher(), v);
            return reader.mightContain(h.h1(), h.h2());
        }
    }

    private static final int SLOTS = 4;

    private final String function;
    private final byte[][] keys = new byte[SLOTS][];
    private final Decoded[] values = new Decoded[SLOTS];
    private int next;

    public FilterValues(String function) {
        this.function = function;
    }

    /**
     * The filter encoded in {@code bytes}.
     *
     * @throws IllegalArgumentException naming the problem if the bytes are not a valid filter
     */
    public Decoded get(byte[] bytes) {
        for (int i = 0; i < SLOTS; i++) {
            if (keys[i] == bytes || (keys[i] != null && Arrays.equals(keys[i], bytes))) {
                return values[i];
            }
        }
        Decoded d = decode(function, bytes);
        keys[next] = bytes.clone();
        values[next] = d;
        next = (next + 1) % SLOTS;
        return d;
    }

    static Decoded decode(String function, byte[] bytes) {
        try {
            FilterFile file = FilterCodec.decodeFile(bytes, null);
            return new Decoded(file, FilterReader.of(file.filter()));
        } catch (FilterFormatException e) {
            throw new IllegalArgumentException(
                    function
                            + ": argument 'filter' is not a valid filter ("
                            + bytes.length
                            + " bytes): "
                            + e.getMessage(),
                    e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    function + ": argument 'filter' cannot be used: " + e.getMessage(), e);
        }
    }
}
