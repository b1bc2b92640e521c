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
}
