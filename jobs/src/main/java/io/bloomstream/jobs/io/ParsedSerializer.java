package io.bloomstream.jobs.io;

import io.bloomstream.flink.typeutils.PageSerializer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes a {@link Parsed} between the commands' operators (it is never kept in state): a flags
 * byte, the raw line, the key if any, then the values, where a value that is the raw line itself
 * (the text format's id) is a flag instead of a second copy. Strings are written as the UTF-8 of
 * each char on its own (as CESU-8 does: a surrogate takes 3 bytes, so any Java string, an unpaired
 * surrogate too, comes back as it was) after a varint byte length; an all-ASCII string is read back
 * in one copy. Flink's POJO serializer wrote the line twice, through reflection, and looked up a
 * thread-local buffer for each string.
 *
 * <p>Each instance keeps a buffer, so {@link #duplicate()} makes a new one for each thread.
 */
public final class ParsedSerializer extends TypeSerializer<Parsed> {

    private static final long serialVersionUID = 1L;

    /** The largest buffer kept between strings; a longer string gets one of its own. */
    private static final int KEPT_BUFFER_BYTES = 1 << 20;

    /**
     * The longest string read, in bytes: the largest Java array (a line at the largest cap, 2^30
     * bytes of UTF-8, takes up to 1.5 times that in modified UTF-8).
     */
    private static final int MAX_STRING_BYTES = Integer.MAX_VALUE - 8;

    /** The most values in a record (a command asks for a few fields). */
    private static final int MAX_VALUES = 1 << 16;

    private static final int HAS_RAW = 1;
    private static final int HAS_KEY = 2;
    private static final int HAS_VALUES = 4;
    private static final int FIRST_VALUE_IS_RAW = 8;

    private transient byte[] buffer;

    @Override
    public boolean isImmutableType() {
        return true; // see Parsed: a copy is the record itself
    }

    @Override
    public TypeSerializer<Parsed> duplicate() {
        return new ParsedSerializer();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ParsedSerializer;
    }

    @Override
    public int hashCode() {
        return ParsedSerializer.class.hashCode();
    }

    @Override
    public Parsed createInstance() {
        return new Parsed(null, null, null);
    }

    @Override
    public Parsed copy(Parsed from) {
        return from;
    }

    @Override
    public Parsed copy(Parsed from, Parsed reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(Parsed p, DataOutputView target) throws IOException {
        String[] values = p.values;
        boolean firstIsRaw = values != null && values.length > 0 && values[0] == p.raw;
        int flags =
                (p.raw != null ? HAS_RAW : 0)
                        | (p.key != null ? HAS_KEY : 0)
                        | (values != null ? HAS_VALUES : 0)
                        | (firstIsRaw ? FIRST_VALUE_IS_RAW : 0);
        target.writeByte(flags);
        if (p.raw != null) {
            writeString(p.raw, target);
        }
        if (p.key != null) {
            writeString(p.key, target);
        }
        if (values != null) {
            if (values.length > MAX_VALUES) {
                throw new IOException("a parsed record of " + values.length + " values");
            }
            writeVarInt(values.length, target);
            for (int i = firstIsRaw ? 1 : 0; i < values.length; i++) {
                String v = values[i];
                if (v == null) {
                    target.writeByte(0);
                } else {
                    target.writeByte(1);
                    writeString(v, target);
                }
            }
        }
    }

    @Override
    public Parsed deserialize(DataInputView source) throws IOException {
        int flags = source.readUnsignedByte();
        if (flags > 15) {
            throw new IOException("corrupt parsed record: flags " + flags);
        }
        String raw = (flags & HAS_RAW) != 0 ? readString(source) : null;
        String key = (flags & HAS_KEY) != 0 ? readString(source) : null;
        String[] values = null;
        if ((flags & HAS_VALUES) != 0) {
            int n = readVarInt(source);
            if (n < 0 || n > MAX_VALUES) {
                throw new IOException("corrupt parsed record: " + n + " values");
            }
            values = new String[n];
            int i = 0;
            if ((flags & FIRST_VALUE_IS_RAW) != 0 && n > 0) {
                values[i++] = raw;
            }
            for (; i < n; i++) {
                values[i] = source.readByte() == 0 ? null : readString(source);
            }
        }
        return new Parsed(raw, key, values);
    }

    @Override
    public Parsed deserialize(Parsed reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }

    /** A buffer of at least {@code length} bytes: the kept one, or for a huge string its own. */
    private byte[] buffer(int length) {
        if (length > KEPT_BUFFER_BYTES) {
            return new byte[length];
        }
        if (buffer == null || buffer.length < length) {
            buffer = new byte[Math.max(length, 256)];
        }
        return buffer;
    }

    private void writeString(String s, DataOutputView target) throws IOException {
        int chars = s.length();
        long most = 3L * chars;
        byte[] b;
        if (most <= KEPT_BUFFER_BYTES) {
            b = buffer((int) most);
        } else {
            long bytes = encodedLength(s);
            if (bytes > MAX_STRING_BYTES) {
                throw new IOException("a string of " + bytes + " bytes in a parsed record");
            }
            b = new byte[(int) bytes];
        }
        int n = 0;
        for (int i = 0; i < chars; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                b[n++] = (byte) c;
            } else if (c < 0x800) {
                b[n++] = (byte) (0xC0 | (c >> 6));
                b[n++] = (byte) (0x80 | (c & 0x3F));
            } else {
                b[n++] = (byte) (0xE0 | (c >> 12));
                b[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                b[n++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        writeVarInt(n, target);
        target.write(b, 0, n);
    }

    /** The bytes {@link #writeString} writes for {@code s}. */
    private static long encodedLength(String s) {
        long bytes = 0;
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        }
        return bytes;
    }

    private String readString(DataInputView source) throws IOException {
        int n = readVarInt(source);
        if (n < 0 || n > MAX_STRING_BYTES) {
            throw new IOException("corrupt parsed record: a string of " + n + " bytes");
        }
        byte[] b;
        if (n <= KEPT_BUFFER_BYTES) {
            b = buffer(n);
            source.readFully(b, 0, n);
        } else {
            // grown as bytes arrive: a corrupt length over a short stream ends in EOF, not OOM
            b = new byte[KEPT_BUFFER_BYTES];
            int read = 0;
            while (read < n) {
                if (read == b.length) {
                    b = java.util.Arrays.copyOf(b, (int) Math.min(n, 2L * b.length));
                }
                int chunk = b.length - read;
                source.readFully(b, read, chunk);
                read += chunk;
            }
        }
        int i = 0;
        while (i < n && b[i] >= 0) {
            i++;
        }
        if (i == n) {
            return new String(b, 0, n, StandardCharsets.ISO_8859_1);
        }
        char[] chars = new char[n];
        int c = 0;
        for (int j = 0; j < n; ) {
            int x = b[j] & 0xFF;
            if (x < 0x80) {
                chars[c++] = (char) x;
                j += 1;
            } else if ((x & 0xE0) == 0xC0 && j + 1 < n) {
                chars[c++] = (char) (((x & 0x1F) << 6) | (b[j + 1] & 0x3F));
                j += 2;
            } else if ((x & 0xF0) == 0xE0 && j + 2 < n) {
                chars[c++] =
                        (char) (((x & 0x0F) << 12) | ((b[j + 1] & 0x3F) << 6) | (b[j + 2] & 0x3F));
                j += 3;
            } else {
                throw new IOException("corrupt parsed record: byte " + x + " at " + j);
            }
        }
        return new String(chars, 0, c);
    }

    private static void writeVarInt(int value, DataOutputView out) throws IOException {
        PageSerializer.writeVarInt(value, out);
    }

    private static int readVarInt(DataInputView in) throws IOException {
        return PageSerializer.readVarInt(in);
    }

    @Override
    public TypeSerializerSnapshot<Parsed> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The serializer's snapshot: no configuration. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<Parsed> {
        /** For Flink. */
        public Snapshot() {
            super(ParsedSerializer::new);
        }
    }
}
