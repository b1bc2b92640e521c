package io.bloomstream.flink.typeutils;

import java.io.EOFException;
import java.io.IOException;
import java.util.Arrays;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes one page of a filter: its words as a varint count then 8 bytes each. A count larger
 * than {@link #MAX_WORDS} is rejected before anything is allocated, and a smaller one is not
 * trusted either: the array starts at {@link #CHUNK_WORDS} words at most and doubles as words
 * arrive, so a corrupt count over a truncated stream fails with an {@link EOFException} naming the
 * count after allocating a few times the bytes actually read (plus at most 8 KiB), never the 16 GiB
 * the count claims. A page of up to 65,536 bits (1,024 words) is read into one array of its size,
 * as before.
 */
@Internal
public final class PageSerializer extends TypeSerializerSingleton<long[]> {

    private static final long serialVersionUID = 1L;

    /** The page format of bloomstream 0.1 on: a varint word count, then the words. */
    public static final int VERSION_1 = 1;

    /**
     * The page format written now. A page value carries no version: a new format needs a new
     * version of the serializer's snapshot ({@link Snapshot}), which Flink reads before any value.
     */
    public static final int VERSION = VERSION_1;

    /** The shared instance (the serializer is stateless). */
    public static final PageSerializer INSTANCE = new PageSerializer();

    /** The largest page: 2^31 - 9 words (a classic filter of about 2^37 bits in one entry). */
    public static final int MAX_WORDS = Integer.MAX_VALUE - 8;

    /**
     * Words read (or bytes copied, times 8) before the array grows: 1 Ki words, 8 KiB, the largest
     * page of a paged filter. (It was 64 Ki words until fuzzing found that a 57-byte value claiming
     * many words cost 512 KiB.)
     */
    static final int CHUNK_WORDS = 1 << 10;

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
        int n = readWordCount(source);
        long[] page = new long[Math.min(n, CHUNK_WORDS)];
        int read = 0;
        try {
            while (read < n) {
                if (read == page.length) {
                    // Double what has actually arrived: a lying count costs at most 2x the bytes.
                    page = Arrays.copyOf(page, (int) Math.min(n, 2L * page.length));
                }
                for (; read < page.length; read++) {
                    page[read] = source.readLong();
                }
            }
        } catch (EOFException e) {
            throw truncated(n, read, e);
        }
        return page;
    }

    @Override
    public long[] deserialize(long[] reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        int n = readWordCount(source);
        writeVarInt(n, target);
        // Through a bounded buffer: DataOutputView#write(DataInputView, int) may reserve the
        // whole length up front, or (DataOutputSerializer) refuse more than its free capacity.
        byte[] buffer = new byte[(int) Math.min(8L * n, 8L * CHUNK_WORDS)];
        long remaining = 8L * n;
        try {
            while (remaining > 0) {
                int chunk = (int) Math.min(remaining, buffer.length);
                source.readFully(buffer, 0, chunk);
                target.write(buffer, 0, chunk);
                remaining -= chunk;
            }
        } catch (EOFException e) {
            throw truncated(n, (int) (n - remaining / 8), e);
        }
    }

    private static int readWordCount(DataInputView source) throws IOException {
        int n = readVarInt(source);
        if (n < 0 || n > MAX_WORDS) {
            throw new IOException("corrupt page: word count " + n);
        }
        return n;
    }

    private static EOFException truncated(int words, int read, EOFException cause) {
        EOFException e =
                new EOFException(
                        "corrupt page: word count "
                                + words
                                + " but the stream ended after about "
                                + read
                                + " words");
        e.initCause(cause);
        return e;
    }

    /** Writes {@code value} as an unsigned LEB128 varint of 1 to 5 bytes. */
    public static void writeVarInt(int value, DataOutputView out) throws IOException {
        int v = value;
        while ((v & ~0x7F) != 0) {
            out.writeByte((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.writeByte(v);
    }

    /** Reads a varint of {@link #writeVarInt}; more than 5 bytes is corrupt. */
    public static int readVarInt(DataInputView in) throws IOException {
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

    /** The snapshot; its version 1 stands for page format {@link #VERSION_1}. */
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
