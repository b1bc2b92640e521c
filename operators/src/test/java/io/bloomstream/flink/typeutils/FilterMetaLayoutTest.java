package io.bloomstream.flink.typeutils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.state.FilterMeta;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Tests for the versioned value layout of {@link FilterMetaSerializer}: version 1 (bloomstream 0.1)
 * stays readable, versions 2 (0.2, 0.3) and 3 (set bits per stage) are locked by golden files, and
 * corrupt input fails with the field named.
 */
class FilterMetaLayoutTest {

    private static final Path GOLDEN_V2 = Path.of("src/test/resources/golden/filter-meta-v2.bin");
    private static final Path GOLDEN_V3 = Path.of("src/test/resources/golden/filter-meta-v3.bin");

    static FilterMeta sample() {
        List<List<FilterMeta.Stage>> slots = new ArrayList<>();
        slots.add(new ArrayList<>(List.of(new FilterMeta.Stage(4096, 7, 2048, 300, 12, 2))));
        slots.add(new ArrayList<>());
        slots.add(
                new ArrayList<>(
                        List.of(
                                new FilterMeta.Stage(9728, 7, 512, 1000, 1000, 19),
                                new FilterMeta.Stage(21504, 7, 512, 2000, 17, 17))));
        FilterMeta meta =
                new FilterMeta(
                        1,
                        0x626c6f6f6d737472L,
                        FilterMeta.DOMAIN_EVENT_TIME,
                        10_000,
                        4_321,
                        new long[] {170_000_000, FilterMeta.EMPTY, 170_000_002},
                        new long[] {170_000_000, FilterMeta.EMPTY, 170_000_009},
                        slots);
        meta.countedBy = 0x0123456789abcdefL;
        return meta;
    }

    /**
     * {@link #sample()} with set bits recorded on the stages of slot 2 (as count state keeps them)
     * and not on slot 0's (as dedup state).
     */
    static FilterMeta sampleWithSetBits() {
        FilterMeta meta = sample();
        meta.slots.get(2).get(0).setBits = 5012;
        meta.slots.get(2).get(1).setBits = 118;
        return meta;
    }

    static byte[] write(FilterMeta meta) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        FilterMetaSerializer.INSTANCE.serialize(meta, out);
        return out.getCopyOfBuffer();
    }

    static FilterMeta read(byte[] bytes) throws IOException {
        return FilterMetaSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes));
    }

    @Test
    void version3MatchesTheGoldenFile() throws Exception {
        if (Boolean.getBoolean("bloomstream.writeGolden")) {
            Files.write(GOLDEN_V3, write(sampleWithSetBits()));
        }
        byte[] golden = Files.readAllBytes(GOLDEN_V3);
        assertThat(golden[0] & 0xFF).as("version byte").isEqualTo(0x83);
        assertThat(write(sampleWithSetBits())).isEqualTo(golden);
        assertThat(read(golden)).isEqualTo(sampleWithSetBits());
        assertThat(read(golden).slots.get(0).get(0).setBits).isEqualTo(FilterMeta.UNKNOWN_SET_BITS);
    }

    /** The version 2 file (written by bloomstream 0.2) reads with no set bits recorded. */
    @Test
    void readsVersion2WithTheSetBitsUnknown() throws Exception {
        byte[] golden = Files.readAllBytes(GOLDEN_V2);
        assertThat(golden[0] & 0xFF).as("version byte").isEqualTo(0x82);
        FilterMeta meta = read(golden);
        assertThat(meta).isEqualTo(sample());
        for (List<FilterMeta.Stage> slot : meta.slots) {
            assertThat(slot).allSatisfy(s -> assertThat(s.setBits).isEqualTo(-1));
        }
        byte[] rewritten = write(meta);
        assertThat(rewritten[0] & 0xFF).as("rewritten as version 3").isEqualTo(0x83);
        assertThat(read(rewritten)).isEqualTo(meta);
    }

    @Test
    void readsVersion1WithTheRetentionShapeUnrecorded() throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeByte(1); // strategy XXH3_128
        out.writeLong(42); // seed
        out.writeByte(2); // generations
        out.writeLong(7); // bucket
        out.writeByte(1); // stages
        out.writeLong(9728);
        out.writeInt(7);
        out.writeInt(512);
        out.writeLong(1000);
        out.writeLong(12);
        out.writeLong(FilterMeta.EMPTY);
        out.writeByte(0);
        FilterMeta meta = read(out.getCopyOfBuffer());
        assertThat(meta.strategyId).isEqualTo(1);
        assertThat(meta.seed).isEqualTo(42);
        assertThat(meta.domain).isEqualTo(FilterMeta.UNRECORDED);
        assertThat(meta.generationMillis).isEqualTo(FilterMeta.UNRECORDED);
        assertThat(meta.buckets).containsExactly(7, FilterMeta.EMPTY);
        assertThat(meta.lastBuckets).containsExactly(7, FilterMeta.EMPTY);
        assertThat(meta.slots.get(0)).hasSize(1);
        assertThat(meta.slots.get(0).get(0).itemsAdded).isEqualTo(12);
        assertThat(meta.slots.get(0).get(0).pages).isEqualTo(FilterMeta.UNKNOWN_PAGES);
        assertThat(meta.countedBy).isEqualTo(FilterMeta.NOT_COUNTED);
        assertThat(read(write(meta))).as("rewritten as version 3").isEqualTo(meta);
    }

    @Test
    void anUnknownVersionFailsNamingIt() throws Exception {
        byte[] bytes = write(sample());
        bytes[0] = (byte) 0x84;
        assertThatThrownBy(() -> read(bytes))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("metadata format version 4");
    }

    @Test
    void theVersionFlagWithVersionOneIsCorrupt() throws Exception {
        byte[] bytes = write(sample());
        bytes[0] = (byte) 0x81;
        assertThatThrownBy(() -> read(bytes))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("corrupt filter metadata: first byte 0x81");
    }

    @Test
    void corruptCountsFailBeforeAllocating() throws Exception {
        byte[] bytes = write(sample());
        // version, strategy, seed (8), domain, generation length (8), phase (8), counted by (8):
        // slot count next
        int slotCount = 1 + 1 + 8 + 1 + 8 + 8 + 8;
        bytes[slotCount] = (byte) 0x7F;
        assertThatThrownBy(() -> read(bytes))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("slot count 127");
        byte[] domain = write(sample());
        domain[10] = 9;
        assertThatThrownBy(() -> read(domain))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("time domain 9");
        byte[] pages = write(sample());
        // the first stage's page count: slot count, first and last bucket, stage count, its fields
        int firstPages = slotCount + 1 + 8 + 8 + 1 + 8 + 4 + 4 + 8 + 8;
        pages[firstPages] = (byte) 0x80;
        assertThatThrownBy(() -> read(pages))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("page count -");
        // the first stage's set bits follow its page count: more than its 4096 bits
        byte[] setBits = write(sample());
        ByteBuffer.wrap(setBits).putLong(firstPages + 8, 4097);
        assertThatThrownBy(() -> read(setBits))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("set bits 4097 of a stage of 4096");
        ByteBuffer.wrap(setBits).putLong(firstPages + 8, -2);
        assertThatThrownBy(() -> read(setBits))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("set bits -2");
    }
}
