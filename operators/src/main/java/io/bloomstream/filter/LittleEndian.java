package io.bloomstream.filter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Little-endian reads and writes on byte arrays. */
final class LittleEndian {

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private LittleEndian() {}

    static long getLong(byte[] b, int off) {
        return (long) LONGS.get(b, off);
    }

    static void putLong(byte[] b, int off, long value) {
        LONGS.set(b, off, value);
    }
}
