package io.bloomstream.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link ExactEntrySize}. */
class ExactEntrySizeTest {

    @Test
    void countsAStringAsFlinksStringSerializerWritesIt() throws Exception {
        String[] ids = {
            "",
            "a",
            "0b7c5e8e-4b1d-4f0e-9a59-1f6c2b9d7e31",
            "x".repeat(200), // a length of two bytes
            ExactKeys.ofLong(-1L), // chars of 16 bits: three bytes each
            ExactKeys.ofBits128(0x0123_4567_89AB_CDEFL, 42),
            ExactKeys.ofBytes(new byte[] {(byte) 0xFF, 0, 0x7F, (byte) 0x80})
        };
        DataOutputSerializer out = new DataOutputSerializer(64);
        for (String id : ids) {
            out.clear();
            StringSerializer.INSTANCE.serialize(id, out);
            assertThat(ExactEntrySize.stringBytes(id)).as(id).isEqualTo(out.length());
        }
    }

    @Test
    void sizesAUuidAsTheLayoutSays() {
        String uuid = "0b7c5e8e-4b1d-4f0e-9a59-1f6c2b9d7e31";
        // node 32, table 8, String 24, array 16 + 36 rounded up to 56
        assertThat(ExactEntrySize.onHeap(uuid)).isEqualTo(120);
        // prefix 1, int key 4, slot 4, string 37, value 2, RocksDB's 10
        assertThat(ExactEntrySize.serialized(uuid, 4, 1)).isEqualTo(58);
    }

    @Test
    void aCharPast255TakesTwoBytesOnTheHeap() {
        assertThat(ExactEntrySize.onHeap(ExactKeys.ofBytes(new byte[] {(byte) 0xFF})))
                .isEqualTo(64 + 24);
        // four 16-bit chars: 8 bytes of array, 24 with its header
        assertThat(ExactEntrySize.onHeap(ExactKeys.ofLong(1L << 62))).isEqualTo(64 + 24);
        assertThat(ExactEntrySize.onHeap(ExactKeys.ofBits128(1L << 62, 1))).isEqualTo(64 + 32);
    }

    @Test
    void noEntryIsSmallerThanTheMinimum() {
        assertThat(ExactEntrySize.serialized("", 1, 1)).isEqualTo(ExactEntrySize.MIN);
        assertThat(ExactEntrySize.onHeap("")).isGreaterThan(ExactEntrySize.MIN);
    }
}
