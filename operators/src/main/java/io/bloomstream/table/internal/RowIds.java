package io.bloomstream.table.internal;

import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.state.ExactKeys;
import io.bloomstream.flink.state.FilterJudge;
import java.util.Arrays;
import org.apache.flink.annotation.Internal;
import org.apache.flink.types.Row;

/**
 * The id of a {@code BLOOM_DEDUP} row, read from its id columns, as the filter hashes it and as
 * exact mode keeps it. One instance per function instance, bound to each row in turn ({@link
 * #bind}); it hashes without allocating for one STRING, BYTES or integer column.
 *
 * <p><b>One column.</b> A value is hashed as the DataStream operator's {@code IdSelector}s hash it
 * (a STRING as its UTF-16 code units, an integer as a BIGINT, BYTES as they are) and its exact key
 * is {@code ExactKeys}' of that kind (an integer as its eight bytes). NULL is one id of its own, as
 * in Flink's keep-first deduplication: it hashes as the empty input and its exact key is the empty
 * string. No other id has either: an empty STRING or BYTES id is rejected ({@link #usable}).
 *
 * <p><b>Several columns.</b> The values are written, in the order of {@code id_column}, into one
 * byte string that two different tuples of values never share (see {@link #encode}): a NULL in one
 * column is a value of its own, and no separator can occur inside a value. The filter hashes that
 * byte string and exact mode keeps it (as {@code ExactKeys.ofBytes}). It is never empty, so it is
 * never the one-column NULL id; every tuple is usable, an empty string included.
 */
@Internal
public final class RowIds implements FilterJudge.IdHash {

    private static final byte NULL_TAG = 0;
    private static final byte VALUE_TAG = 1;

    private final int[] columns;
    private final DedupArguments.IdKind[] kinds;
    private Object single;
    private byte[] buffer = new byte[64];
    private int length;

    /**
     * @param columns the id columns' positions in the input row, in {@code id_column}'s order
     * @param kinds their kinds
     */
    public RowIds(int[] columns, DedupArguments.IdKind[] kinds) {
        if (columns.length == 0 || columns.length != kinds.length) {
            throw new IllegalArgumentException(
                    "id columns "
                            + Arrays.toString(columns)
                            + " of kinds "
                            + Arrays.toString(kinds));
        }
        this.columns = columns.clone();
        this.kinds = kinds.clone();
    }

    /** Binds the row whose id is hashed next. */
    public void bind(Row row) {
        if (columns.length == 1) {
            single = row.getField(columns[0]);
        } else {
            length = 0;
            for (int i = 0; i < columns.length; i++) {
                encode(row.getField(columns[i]), kinds[i]);
            }
        }
    }

    /**
     * Whether the bound row has an id: every tuple of several columns, and one column's value
     * unless it is an empty STRING or BYTES (NULL is an id).
     */
    public boolean usable() {
        if (columns.length > 1 || single == null) {
            return true;
        }
        switch (kinds[0]) {
            case STRING:
                return !((String) single).isEmpty();
            case BYTES:
                return ((byte[]) single).length != 0;
            default:
                return true;
        }
    }

    /** The bound row's exact key ({@code ExactKeys}); see the class comment. */
    public String exactKey() {
        if (columns.length > 1) {
            return ExactKeys.ofBytes(Arrays.copyOf(buffer, length));
        }
        if (single == null) {
            return "";
        }
        switch (kinds[0]) {
            case STRING:
                return ExactKeys.ofString((String) single);
            case BYTES:
                return ExactKeys.ofBytes((byte[]) single);
            default: // keys are stored as UTF-8 here: no 16-bit chars (see ExactKeys)
                return ExactKeys.ofLongAsBytes(((Number) single).longValue());
        }
    }

    /**
     * The bound row's id hashed under its key's hasher: XXH3-64 for keys new to the state, once per
     * row; XXH3-128 for keys whose state an earlier release wrote (a STRING as its UTF-8 bytes), as
     * that release hashed them.
     */
    @Override
    public void hashInto(Hasher hasher, long[] out) {
        if (hasher.is64Bit()) {
            long h = hash64(hasher);
            out[0] = h;
            out[1] = h;
            return;
        }
        Hash128 h = hash128(hasher);
        out[0] = h.h1();
        out[1] = h.h2();
    }

    private long hash64(Hasher hasher) {
        if (columns.length > 1) {
            return hasher.hash64(buffer, 0, length);
        }
        Object id = single;
        if (id == null) {
            return hasher.hash64(buffer, 0, 0);
        }
        switch (kinds[0]) {
            case STRING:
                return hasher.hash64((String) id);
            case BYTES:
                byte[] b = (byte[]) id;
                return hasher.hash64(b, 0, b.length);
            default:
                return hasher.hash64(((Number) id).longValue());
        }
    }

    private Hash128 hash128(Hasher hasher) {
        if (columns.length > 1) {
            return hasher.hash(buffer, 0, length);
        }
        Object id = single;
        if (id == null) {
            return hasher.hash(buffer, 0, 0);
        }
        switch (kinds[0]) {
            case STRING:
                return hasher.hash((String) id);
            case BYTES:
                return hasher.hash((byte[]) id);
            default:
                return hasher.hash(((Number) id).longValue());
        }
    }

    /**
     * Appends one column's value: a tag byte (NULL or value), then for a value its bytes, prefixed
     * by their count where the kind's length varies: a STRING as a 4-byte count of UTF-16 code
     * units and the units (two bytes each, high first), BYTES as a 4-byte count and the bytes, an
     * integer as its eight bytes (high first). Every part's length is known before it is read, so
     * the encoding of a tuple decodes back to it: two tuples never share a byte string.
     */
    private void encode(Object value, DedupArguments.IdKind kind) {
        if (value == null) {
            ensure(1);
            buffer[length++] = NULL_TAG;
            return;
        }
        switch (kind) {
            case STRING:
                String s = (String) value;
                ensure(5 + 2 * s.length());
                buffer[length++] = VALUE_TAG;
                putInt(s.length());
                for (int i = 0; i < s.length(); i++) {
                    char c = s.charAt(i);
                    buffer[length++] = (byte) (c >>> 8);
                    buffer[length++] = (byte) c;
                }
                break;
            case BYTES:
                byte[] b = (byte[]) value;
                ensure(5 + b.length);
                buffer[length++] = VALUE_TAG;
                putInt(b.length);
                System.arraycopy(b, 0, buffer, length, b.length);
                length += b.length;
                break;
            default:
                ensure(9);
                buffer[length++] = VALUE_TAG;
                long v = ((Number) value).longValue();
                for (int shift = 56; shift >= 0; shift -= 8) {
                    buffer[length++] = (byte) (v >>> shift);
                }
        }
    }

    private void putInt(int v) {
        buffer[length++] = (byte) (v >>> 24);
        buffer[length++] = (byte) (v >>> 16);
        buffer[length++] = (byte) (v >>> 8);
        buffer[length++] = (byte) v;
    }

    private void ensure(int more) {
        if (length + more > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(2 * buffer.length, length + more));
        }
    }
}
