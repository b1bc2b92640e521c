package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link LineParser}. */
class LineParserTest {

    @Test
    void refusesARecordNamingAFieldItReadsTwice() throws Exception {
        LineParser screen = new LineParser(LineParser.Format.JSON, null, List.of("from", "to"));
        // the last value alone would pass a screen that lists the first
        assertThatThrownBy(() -> screen.parse("{\"from\":\"listed@x\",\"from\":\"ok@y\"}"))
                .isInstanceOf(LineParser.BadRecord.class)
                .hasMessage("duplicate field 'from'");
        // the same name spelled with an escape is the same field
        assertThatThrownBy(() -> screen.parse("{\"to\":\"a@x\",\"t\\u006f\":\"b@y\"}"))
                .hasMessage("duplicate field 'to'");
        // null or a nested value the second time is a second value too
        assertThatThrownBy(() -> screen.parse("{\"from\":\"a@x\",\"from\":{\"x\":1}}"))
                .hasMessage("duplicate field 'from'");
        LineParser keyed = new LineParser(LineParser.Format.JSON, "user", List.of("id", "time"));
        assertThatThrownBy(() -> keyed.parse("{\"user\":\"u1\",\"id\":\"a\",\"user\":\"u2\"}"))
                .hasMessage("duplicate field 'user'");
        assertThatThrownBy(() -> keyed.parse("{\"user\":\"u\",\"id\":\"a\",\"time\":1,\"time\":2}"))
                .hasMessage("duplicate field 'time'");
        // a field it does not read may repeat; the record is parsed as before
        Parsed p = keyed.parse("{\"user\":\"u\",\"id\":\"a\",\"x\":1,\"x\":2,\"time\":3}");
        assertThat(p.key).isEqualTo("u");
        assertThat(p.values).containsExactly("a", "3");
        // a field that is both the key and a value is read once per occurrence
        LineParser same = new LineParser(LineParser.Format.JSON, "id", List.of("id"));
        assertThat(same.parse("{\"id\":\"a\"}").values).containsExactly("a");
        assertThatThrownBy(() -> same.parse("{\"id\":\"a\",\"id\":\"b\"}"))
                .hasMessage("duplicate field 'id'");
    }

    @Test
    void aValidLineSpellingTheNotUtf8MarkerIsAnOrdinaryLine() throws Exception {
        String line = "\u0000not-utf8:eP95";
        LineParser text = new LineParser(LineParser.Format.TEXT, null, List.of());
        assertThat(text.parse(line).values).containsExactly(line);
        LineParser json = new LineParser(LineParser.Format.JSON, null, List.of("id"));
        assertThatThrownBy(() -> json.parse(line)).hasMessageStartingWith("not JSON");
        // rejected, it is written as it was, not as bytes it never had
        assertThat(Rejects.json("not JSON", line))
                .isEqualTo("{\"reason\":\"not JSON\",\"record\":\"\\u0000not-utf8:eP95\"}");
    }
}
