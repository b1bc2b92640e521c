package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link Utf8LineFormat} and the reasons of {@link Utf8Lines}. */
class Utf8LineFormatTest {

    private static List<String> lines(byte[] bytes) throws Exception {
        List<String> lines = new ArrayList<>();
        try (var reader = new Utf8LineFormat.LineReader(new ByteArrayInputStream(bytes))) {
            for (String l = reader.read(); l != null; l = reader.read()) {
                lines.add(l);
            }
        }
        return lines;
    }

    @Test
    void splitsLinesAtEveryTerminatorLikeReadLine() throws Exception {
        byte[] text = "a\nb\r\nc\rd\n\ne".getBytes(StandardCharsets.UTF_8);
        assertThat(lines(text)).containsExactly("a", "b", "c", "d", "", "e");
        assertThat(lines("a\n".getBytes(StandardCharsets.UTF_8))).containsExactly("a");
        assertThat(lines(new byte[0])).isEmpty();
    }

    @Test
    void readsLinesLongerThanItsBuffers() throws Exception {
        String longLine = "\u00e9".repeat(100_000); // 200,000 bytes, a 2-byte char across reads
        byte[] text = (longLine + "\n" + longLine).getBytes(StandardCharsets.UTF_8);
        assertThat(lines(text)).containsExactly(longLine, longLine);
    }

    @Test
    void marksEachInvalidLineWithItsOwnBytesAndTheOffsetOfTheFirstBadByte() throws Exception {
        byte[] text = {'o', 'k', '\n', 'x', (byte) 0xFF, 'y', '\n', 'x', (byte) 0xFE, 'y'};
        List<String> lines = lines(text);
        assertThat(lines).hasSize(3).doesNotHaveDuplicates();
        assertThat(lines.get(0)).isEqualTo("ok");
        assertThat(lines.get(1)).isEqualTo(Utf8Lines.NOT_UTF8 + "eP95");
        assertThat(Utf8Lines.reason(lines.get(1))).isEqualTo("not valid UTF-8 at byte 1");
        // A truncated 3-byte sequence and an encoded surrogate (CESU-8) are not UTF-8 either.
        byte[] truncated = {'a', 'b', (byte) 0xE2, (byte) 0x82};
        assertThat(Utf8Lines.reason(lines(truncated).get(0)))
                .isEqualTo("not valid UTF-8 at byte 2");
        byte[] surrogate = {(byte) 0xED, (byte) 0xA0, (byte) 0x80};
        assertThat(Utf8Lines.reason(lines(surrogate).get(0)))
                .isEqualTo("not valid UTF-8 at byte 0");
    }

    @Test
    void aValidLineSpellingTheNotUtf8MarkerIsReadAsItself() throws Exception {
        String spelled = "\u0000not-utf8:eP95";
        byte[] text = (spelled + "\n").getBytes(StandardCharsets.UTF_8);
        List<String> lines = lines(text);
        assertThat(lines).containsExactly(spelled);
        assertThat(new Utf8Lines().deserialize(text)).isEqualTo(spelled + "\n");
        LineParser parser = new LineParser(LineParser.Format.TEXT, null, List.of());
        assertThat(parser.parse(lines.get(0)).values).containsExactly(spelled);
        // and a line that is not UTF-8 is still told apart from it
        String invalid = lines(new byte[] {'x', (byte) 0xFF}).get(0);
        assertThat(invalid).isNotEqualTo(spelled);
        assertThatThrownBy(() -> parser.parse(invalid)).hasMessage("not valid UTF-8 at byte 1");
    }

    @Test
    void capsALineAtTheDefaultWithoutHoldingItAndReadsOn() throws Exception {
        // 20 MB of 'x' without a newline, then two lines: the reader keeps at most the cap
        long length = 20_000_000;
        var in =
                new java.io.SequenceInputStream(
                        new Repeat((byte) 'x', length),
                        new ByteArrayInputStream(
                                "\nnext\r\nlast".getBytes(StandardCharsets.UTF_8)));
        List<String> lines = new ArrayList<>();
        try (var reader = new Utf8LineFormat.LineReader(in)) {
            for (String l = reader.read(); l != null; l = reader.read()) {
                lines.add(l);
                assertThat(reader.bufferSize())
                        .isLessThanOrEqualTo(Utf8Lines.DEFAULT_MAX_LINE_BYTES);
            }
        }
        assertThat(lines).hasSize(3);
        assertThat(lines.subList(1, 3)).containsExactly("next", "last");
        assertThat(Utf8Lines.reason(lines.get(0)))
                .isEqualTo("line of 20000000 bytes, longer than --max-line-bytes 1048576");
        // rejected with its reason and a bounded prefix of its bytes, never the whole line
        String rejected = Rejects.json(Utf8Lines.reason(lines.get(0)), lines.get(0));
        assertThat(rejected)
                .isEqualTo(
                        "{\"reason\":\"line of 20000000 bytes, longer than --max-line-bytes"
                                + " 1048576\",\"record_prefix_base64\":\""
                                + java.util.Base64.getEncoder()
                                        .encodeToString(
                                                "x".repeat(Utf8Lines.PREFIX_BYTES).getBytes())
                                + "\"}");
    }

    @Test
    void capsALineAtAnyLengthAndAtTheEndOfTheFile() throws Exception {
        byte[] text = "12345\n123456\n1234567".getBytes(StandardCharsets.UTF_8);
        List<String> lines = new ArrayList<>();
        try (var reader = new Utf8LineFormat.LineReader(new ByteArrayInputStream(text), null, 6)) {
            for (String l = reader.read(); l != null; l = reader.read()) {
                lines.add(l);
            }
        }
        assertThat(lines).hasSize(3);
        assertThat(lines.subList(0, 2)).containsExactly("12345", "123456");
        assertThat(Utf8Lines.reason(lines.get(2)))
                .isEqualTo("line of 7 bytes, longer than --max-line-bytes 6");
        assertThat(Rejects.json("r", lines.get(2)))
                .isEqualTo("{\"reason\":\"r\",\"record_prefix_base64\":\"MTIzNDU2\"}");
    }

    @Test
    void capsAKafkaRecord() {
        byte[] big = new byte[2_000_000];
        java.util.Arrays.fill(big, (byte) 'y');
        String record = new Utf8Lines().deserialize(big);
        assertThat(Utf8Lines.reason(record))
                .isEqualTo("line of 2000000 bytes, longer than --max-line-bytes 1048576");
        assertThat(new Utf8Lines(null, 2_000_000).deserialize(big)).hasSize(2_000_000);
    }

    /** {@code count} copies of one byte, generated as they are read. */
    private static final class Repeat extends java.io.InputStream {
        private final byte b;
        private long left;

        Repeat(byte b, long count) {
            this.b = b;
            this.left = count;
        }

        @Override
        public int read() {
            if (left == 0) {
                return -1;
            }
            left--;
            return b;
        }

        @Override
        public int read(byte[] into, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            java.util.Arrays.fill(into, off, off + n, b);
            left -= n;
            return n;
        }
    }
}
