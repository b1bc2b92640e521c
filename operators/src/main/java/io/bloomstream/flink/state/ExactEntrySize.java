package io.bloomstream.flink.state;

import org.apache.flink.annotation.Internal;

/**
 * The estimated bytes of one of exact mode's entries ({@link ExactEntries}), computed from its
 * layout when it is written. An estimate, not a measurement: it leaves out what is shared by the
 * entries of one (key, slot) (the heap backend's state-map entry and the map itself; RocksDB's
 * block index and filter blocks) and the backend's slack (a HashMap's table between resizes,
 * RocksDB's memtable arena and compression).
 *
 * <p>Heap backend (a {@code HashMap<String, Boolean>} per (key, slot), 64-bit JVM with compressed
 * references, heaps under 32 GB, and compact strings): a {@code HashMap.Node} of 32 bytes, 8 bytes
 * of the table (a 4-byte reference at a load of 0.375 to 0.75: 5 to 11 bytes), the key's {@code
 * String} of 24 bytes and its array, 16 bytes of header and one byte a char (two if a char is past
 * 255: the exact keys of long and 128-bit ids), rounded up to 8; the value is the shared {@code
 * Boolean.TRUE}. A 36-character UUID is 32 + 8 + 24 + 56 = 120 bytes.
 *
 * <p>A backend that serializes its state (RocksDB): the key-group prefix (1 byte, 2 past a maximum
 * parallelism of 128), the stream key as its serializer writes it, the 4-byte slot, the id as
 * Flink's {@code StringSerializer} writes it (its length plus one, then each char, 7 bits a byte),
 * the value (a null flag and the boolean: 2 bytes), and 10 bytes of RocksDB's own (the sequence
 * number and type, and the two lengths), before compression. A 36-character UUID under an int shard
 * key is 1 + 4 + 4 + 37 + 2 + 10 = 58 bytes.
 */
@Internal
public final class ExactEntrySize {

    /** Heap: the node, its share of the table and the {@code String}, without its array. */
    static final int HEAP_FIXED = 32 + 8 + 24;

    /** Heap: an array's header. */
    static final int ARRAY_HEADER = 16;

    /** Serialized: the slot (the namespace), the value, RocksDB's sequence, type and lengths. */
    static final int SERIALIZED_FIXED = 4 + 2 + 10;

    /** The fewest bytes an entry takes on either backend (an empty key, a 1-byte stream key). */
    public static final long MIN = SERIALIZED_FIXED + 1 + 1 + 1;

    private ExactEntrySize() {}

    /** The bytes of an entry of {@code id} on the heap backend. */
    public static long onHeap(String id) {
        int bytesPerChar = 1;
        for (int i = 0; i < id.length(); i++) {
            if (id.charAt(i) > 0xFF) {
                bytesPerChar = 2;
                break;
            }
        }
        return HEAP_FIXED + align8(ARRAY_HEADER + (long) id.length() * bytesPerChar);
    }

    /**
     * The bytes of an entry of {@code id} in a backend that serializes its state, under a stream
     * key of {@code keyBytes} serialized bytes and a key-group prefix of {@code prefixBytes}.
     */
    public static long serialized(String id, int keyBytes, int prefixBytes) {
        return prefixBytes + keyBytes + SERIALIZED_FIXED + stringBytes(id);
    }

    /** The bytes of {@code s} as Flink's {@code StringSerializer} writes it. */
    static long stringBytes(String s) {
        long n = varLength(s.length() + 1);
        for (int i = 0; i < s.length(); i++) {
            n += varLength(s.charAt(i));
        }
        return n;
    }

    /** The bytes of {@code v} written 7 bits a byte. */
    private static int varLength(int v) {
        int n = 1;
        while (v >= 0x80) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    private static long align8(long n) {
        return (n + 7) & ~7L;
    }
}
