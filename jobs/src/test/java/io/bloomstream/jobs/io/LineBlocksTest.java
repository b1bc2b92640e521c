package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/** {@link LineBlocks}: the same bytes as the row format's encoder, none left behind a barrier. */
class LineBlocksTest {

    @Test
    void writesTheBytesOfTheRowFormatEncoder() throws Exception {
        List<String> lines = List.of("alpha", "", "é€😀", "\uD800 lone", "x".repeat(200_000), "z");
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        SimpleStringEncoder<String> rows = new SimpleStringEncoder<>("UTF-8");
        for (String line : lines) {
            rows.encode(line, expected);
        }
        try (var harness = harness()) {
            for (String line : lines) {
                harness.processElement(new StreamRecord<>(line));
            }
            harness.endInput();
            assertThat(concat(blocks(harness))).isEqualTo(expected.toByteArray());
        }
    }

    @Test
    void emitsABlockWhenFullAndTheRestBeforeEachBarrier() throws Exception {
        String line = "0123456789abcde"; // 16 bytes with its newline
        int perBlock = LineBlocks.BLOCK_BYTES / 16;
        try (var harness = harness()) {
            for (int i = 0; i < perBlock + 3; i++) {
                harness.processElement(new StreamRecord<>(line));
            }
            assertThat(blocks(harness)).extracting(b -> b.length).containsExactly(perBlock * 16);
            harness.prepareSnapshotPreBarrier(1);
            assertThat(blocks(harness))
                    .extracting(b -> b.length)
                    .containsExactly(perBlock * 16, 3 * 16);
            harness.prepareSnapshotPreBarrier(2); // nothing buffered: no empty block
            harness.endInput();
            assertThat(blocks(harness)).hasSize(2);
        }
    }

    private static OneInputStreamOperatorTestHarness<String, byte[]> harness() throws Exception {
        var harness = new OneInputStreamOperatorTestHarness<>(new LineBlocks());
        harness.open();
        return harness;
    }

    private static List<byte[]> blocks(OneInputStreamOperatorTestHarness<String, byte[]> h) {
        List<byte[]> blocks = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord<?> r) {
                blocks.add((byte[]) r.getValue());
            }
        }
        return blocks;
    }

    private static byte[] concat(List<byte[]> blocks) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        blocks.forEach(all::writeBytes);
        return all.toByteArray();
    }
}
