package io.bloomstream.flink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.helpers.MessageFormatter;

/** Tests for {@link RejectLog}. */
class RejectLogTest {

    /** The lines {@code warn(format, args...)} was called with. */
    private final List<String> lines = new ArrayList<>();

    private final Logger log =
            (Logger)
                    Proxy.newProxyInstance(
                            Logger.class.getClassLoader(),
                            new Class<?>[] {Logger.class},
                            (proxy, method, args) -> {
                                if (method.getName().equals("warn")
                                        && args.length == 2
                                        && args[1] instanceof Object[]) {
                                    lines.add(
                                            MessageFormatter.arrayFormat(
                                                            (String) args[0], (Object[]) args[1])
                                                    .getMessage());
                                }
                                return method.getReturnType() == boolean.class ? true : null;
                            });

    @Test
    void escapesControlCharactersSoThatARecordCannotForgeLogLines() {
        RejectLog rejects = new RejectLog(log, "bloomRejected");
        rejects.rejected(
                1,
                "no id\r\n2026-11-27 INFO forged",
                "a\n2026-11-27 09:00:00,000 ERROR forged line\u001b[31m\t\u0000\u2028\u202e\\");
        assertThat(lines).hasSize(1);
        String line = lines.get(0);
        assertThat(line).doesNotContain("\n", "\r", "\u001b", "\u0000", "\u2028", "\u202e");
        assertThat(line)
                .isEqualTo(
                        "Rejected event (no id\\r\\n2026-11-27 INFO forged); 1 rejected so far, see"
                                + " metric bloomRejected: a\\n2026-11-27 09:00:00,000 ERROR forged"
                                + " line\\u001b[31m\\t\\u0000\\u2028\\u202e\\\\");
    }

    @Test
    void cutsALongRecordAfterEscapingIt() {
        RejectLog rejects = new RejectLog(log, "bloomRejected");
        rejects.rejected(1, "r", "\n".repeat(300));
        assertThat(lines.get(0)).endsWith(": " + "\\n".repeat(100) + "...");
    }
}
