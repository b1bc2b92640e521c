package io.bloomstream.flink.typeutils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link PageSerializer}. */
class PageSerializerTest extends SerializerTestBase<long[]> {

    @Override
    protected TypeSerializer<long[]> createSerializer() {
        return PageSerializer.INSTANCE;
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<long[]> getTypeClass() {
        return long[].class;
    }

    @Override
    protected long[][] getTestData() {
        return new long[][] {
            {}, {0L}, {-1L, Long.MIN_VALUE, Long.MAX_VALUE, 1, 2, 3, 4, 5}, new long[1024]
        };
    }

    @Test
    void hostileWordCountIsRejectedBeforeAllocating() {
        // varint 0xFFFFFFFF (negative as an int)
        byte[] bytes = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F};
        assertThatThrownBy(
                        () -> PageSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("word count");
    }

    /** A header claiming {@link PageSerializer#MAX_WORDS} words (16 GiB), then only 16 bytes. */
    static byte[] truncatedHugePage() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(32);
        PageSerializer.writeVarInt(PageSerializer.MAX_WORDS, out);
        out.writeLong(1);
        out.writeLong(2);
        return out.getCopyOfBuffer();
    }

    /** Bytes the current thread allocated running {@code r} (which must throw) a second time. */
    static long allocatedWhileFailing(org.assertj.core.api.ThrowableAssert.ThrowingCallable r) {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertThatThrownBy(r).isInstanceOf(IOException.class); // loads the classes on the way
        long before = mx.getCurrentThreadAllocatedBytes();
        assertThatThrownBy(r)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("word count " + PageSerializer.MAX_WORDS);
        return mx.getCurrentThreadAllocatedBytes() - before;
    }

    @Test
    void aTruncatedPageWithAHugeWordCountFailsWithoutAllocatingIt() throws IOException {
        byte[] bytes = truncatedHugePage();
        // Reading 2 words may allocate one 1 Ki-word chunk (8 KiB), not 16 GiB: 64 KiB is a
        // generous bound for that plus the exception and AssertJ's bookkeeping. (Before fuzzing
        // found it, the first chunk was 64 Ki words: 512 KiB for a 21-byte value.)
        long allocated =
                allocatedWhileFailing(
                        () ->
                                PageSerializer.INSTANCE.deserialize(
                                        new DataInputDeserializer(bytes)));
        assertThat(allocated).isLessThan(64L << 10);
    }

    @Test
    void copyingATruncatedPageWithAHugeWordCountFailsWithoutAllocatingIt() throws IOException {
        byte[] bytes = truncatedHugePage();
        DataOutputSerializer target = new DataOutputSerializer(64);
        long allocated =
                allocatedWhileFailing(
                        () ->
                                PageSerializer.INSTANCE.copy(
                                        new DataInputDeserializer(bytes), target));
        assertThat(allocated).isLessThan(64L << 10);
    }

    @Test
    void pagesLongerThanOneReadChunkRoundTrip() throws IOException {
        long[] page = new long[3 * 65536 + 5];
        for (int i = 0; i < page.length; i++) {
            page[i] = i * 0x9E3779B97F4A7C15L;
        }
        DataOutputSerializer out = new DataOutputSerializer(16);
        PageSerializer.INSTANCE.serialize(page, out);
        byte[] bytes = out.getCopyOfBuffer();
        assertThat(bytes).hasSize(3 + 8 * page.length); // varint of 196613 is 3 bytes
        assertThat(PageSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes)))
                .isEqualTo(page);
        DataOutputSerializer copied = new DataOutputSerializer(16);
        PageSerializer.INSTANCE.copy(new DataInputDeserializer(bytes), copied);
        assertThat(copied.getCopyOfBuffer()).isEqualTo(bytes);
    }
}
