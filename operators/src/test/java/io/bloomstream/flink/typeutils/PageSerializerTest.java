package io.bloomstream.flink.typeutils;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
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
}
