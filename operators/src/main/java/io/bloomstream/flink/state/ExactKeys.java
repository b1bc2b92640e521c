package io.bloomstream.flink.state;

import java.nio.charset.StandardCharsets;
import org.apache.flink.annotation.Internal;

/**
 * The exact key of an id, as exact mode stores it beside the filter ({@link
 * FilterStore#exactContains}): a {@code String} that equals another exact key of the same kind of
 * id if and only if the ids are equal (keys of different kinds are never compared: a job's ids have
 * one kind). Part of the savepoint contract (exact entries format 1, docs/state.md): a string id is
 * itself; a byte array is one char per byte (ISO-8859-1); a long is its four 16-bit chars, high
 * first; 128 bits are their eight 16-bit chars, high first. A {@code String} rather than bytes
 * because the heap state backend compares map keys with {@code equals}, and Flink's {@code
 * StringSerializer} writes any char, a lone surrogate too, and reads it back unchanged.
 */
@Internal
public final class ExactKeys {

    /** The version of the exact entries' format (their keys, above, and their values). */
    public static final int VERSION_1 = 1;

    /** The version written now. */
    public static final int VERSION = VERSION_1;

    private ExactKeys() {}

    /** A string id's exact key: the string itself. */
    public static String ofString(String id) {
        return id;
    }

    /** A byte-array id's exact key: one char per byte. */
    public static String ofBytes(byte[] id) {
        return new String(id, StandardCharsets.ISO_8859_1);
    }

    /** A long id's exact key: four chars, high first. */
    public static String ofLong(long id) {
        char[] c = new char[4];
        put(c, 0, id);
        return new String(c);
    }

    /**
     * A long id's exact key where keys are stored as UTF-8 (the SQL function's {@code
     * MapView<STRING, ...>} holds Flink's {@code StringData}, which encodes a lone surrogate as
     * '?', so the chars of {@link #ofLong} could collide there): its eight big-endian bytes, one
     * char per byte, as {@link #ofBytes}.
     */
    public static String ofLongAsBytes(long id) {
        char[] c = new char[8];
        for (int i = 0; i < 8; i++) {
            c[i] = (char) ((id >>> (56 - 8 * i)) & 0xFF);
        }
        return new String(c);
    }

    /** The exact key of 128 bits (a UUID, or what {@code IdSelector.ofBits128} returns). */
    public static String ofBits128(long hi, long lo) {
        char[] c = new char[8];
        put(c, 0, hi);
        put(c, 4, lo);
        return new String(c);
    }

    private static void put(char[] c, int at, long v) {
        c[at] = (char) (v >>> 48);
        c[at + 1] = (char) (v >>> 32);
        c[at + 2] = (char) (v >>> 16);
        c[at + 3] = (char) v;
    }
}
