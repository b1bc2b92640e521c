package io.bloomstream.flink.typeutils;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes one page of a filter: its words as a varint count then 8 bytes each. A hostile count
 * larger than {@link #MAX_WORDS} is rejected before anything is allocated.
 */
@Internal
public final class PageSerializer extends TypeSerializerSingleton<long[]> {

    private static final long serialVersionUID = 1L;

    /** The shared instance (the serializer is stateless). */
    public static final PageSerializer INSTANCE = new PageSerializer();

    /** The largest page: 2^31 - 9 words (a classic filter of about 2^37 bits in one entry). */
    public static final int MAX_WORDS = Integer.MAX_VALUE - 8;

    private static final long[] EMPTY = new long[0];

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public long[] createInstance() {
        return EMPTY;
    }

    @Override
    public long[] copy(long[] from) {
        return from.clone();
    }

    @Override
    public long[] copy(long[] from, long[] reuse) {
        return from.clone();
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(long[] page, DataOutputView target) throws IOException {
        writeVarInt(page.length, target);
        for (long w : page) {
            target.writeLong(w);
        }
    }

    @Override
    public long[] deserialize(DataInputView source) throws IOException {
        int n = readVarInt(source);
        if (n < 0 || n > MAX_WORDS) {
            throw new IOException("corrupt page: word count " + n);
        }
        long[] page = new long[n];
        for (int i = 0; i < n; i++) {
            page[i] = source.readLong();
        }
        return page;
    }

    @Override
    public long[] deserialize(long[] reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        int n = readVarInt(source);
        if (n < 0 || n > MAX_WORDS) {
            throw new IOException("corrupt page: word count " + n);
        }
        writeVarInt(n, target);
        long remaining = 8L * n;
        while (remaining > 0) {
            int chunk = (int) Math.min(remaining, 1 << 20);
            target.write(source, chunk);
            remaining -= chunk;
        }
    }

    static void writeVarInt(int value, DataOutputView out) throws IOException {
        int v = value;
        while ((v & ~0x7F) != 0) {
            out.writeByte((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.writeByte(v);
    }

    static int readVarInt(DataInputView in) throws IOException {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            int b = in.readUnsignedByte();
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new IOException("corrupt varint");
    }

    @Override
    public TypeSerializerSnapshot<long[]> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The snapshot; version 1 is the layout above. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<long[]> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    /** Keeps Java serialization of the singleton a singleton. */
    private Object readResolve() {
        return INSTANCE;
    }
}
