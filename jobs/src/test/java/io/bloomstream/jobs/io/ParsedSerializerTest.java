package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Flink's serializer contract for {@link ParsedSerializer}, and the strings it must keep. */
class ParsedSerializerTest extends SerializerTestBase<Parsed> {

    @Override
    protected TypeSerializer<Parsed> createSerializer() {
        return new ParsedSerializer();
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<Parsed> getTypeClass() {
        return Parsed.class;
    }

    @Override
    protected Parsed[] getTestData() {
        String line = "c2ac0d3faf1a4fcf";
        return new Parsed[] {
            new Parsed(line, null, new String[] {line}),
            new Parsed("{\"id\":\"a\",\"k\":\"b\"}", "b", new String[] {"a", null, "é€😀"}),
            new Parsed("", "", new String[0]),
            new Parsed(null, null, null),
            new Parsed("\uD800 lone high", "k\uDC00", new String[] {"\uDBFF", "x".repeat(70_000)}),
        };
    }

    @Override
    protected void deepEquals(String message, Parsed should, Parsed is) {
        assertThat(is.raw).as(message).isEqualTo(should.raw);
        assertThat(is.key).as(message).isEqualTo(should.key);
        assertThat(is.values).as(message).isEqualTo(should.values);
    }

    @Test
    void writesTheTextLineOnce() throws IOException {
        String line = "0123456789abcdef";
        DataOutputSerializer shared = new DataOutputSerializer(64);
        new ParsedSerializer().serialize(new Parsed(line, null, new String[] {line}), shared);
        DataOutputSerializer copied = new DataOutputSerializer(64);
        new ParsedSerializer()
                .serialize(new Parsed(line, null, new String[] {new String(line)}), copied);
        // flags, length, 16 bytes, count; the copy adds a presence byte, a length and 16 bytes
        assertThat(shared.length()).isEqualTo(1 + 1 + 16 + 1);
        assertThat(copied.length()).isEqualTo(shared.length() + 1 + 1 + 16);
        Parsed back =
                new ParsedSerializer()
                        .deserialize(new DataInputDeserializer(shared.getCopyOfBuffer()));
        assertThat(back.values[0]).isSameAs(back.raw).isEqualTo(line);
    }

    @Test
    void flinksTypeExtractionFindsItsOwnSerializer() {
        assertThat(org.apache.flink.api.common.typeinfo.TypeInformation.of(Parsed.class))
                .isEqualTo(Parsed.TYPE);
    }

    @Test
    void keepsAStringLongerThanItsBuffer() throws IOException {
        String long3 = "€".repeat(400_000); // 1.2 MB encoded: past the 1 MiB kept buffer
        ParsedSerializer serializer = new ParsedSerializer();
        DataOutputSerializer out = new DataOutputSerializer(64);
        serializer.serialize(new Parsed(long3, null, new String[] {long3}), out);
        Parsed back = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertThat(back.raw).isEqualTo(long3);
        // a length of 1.2 MB over a stream of 10 bytes: EOF, read in chunks of at most 1 MiB
        byte[] corrupt = {1, (byte) 0x80, (byte) 0xA4, 0x49, 'a', 'b', 'c', 'd', 'e', 'f'};
        assertThatThrownBy(() -> read(corrupt)).isInstanceOf(java.io.EOFException.class);
    }

    @Test
    void refusesCorruptInputWithItsReason() {
        assertThatThrownBy(() -> read(new byte[] {(byte) 0x40}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("flags 64");
        assertThatThrownBy(
                        () ->
                                read(
                                        new byte[] {
                                            1,
                                            (byte) 0xFF,
                                            (byte) 0xFF,
                                            (byte) 0xFF,
                                            (byte) 0xFF,
                                            0x0F
                                        }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("a string of -1 bytes");
        assertThatThrownBy(() -> read(new byte[] {1, 1, (byte) 0xFF}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("byte 255 at 0");
    }

    private static Parsed read(byte[] bytes) throws IOException {
        return new ParsedSerializer().deserialize(new DataInputDeserializer(bytes));
    }
}
