package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Tests {@link Main#uncaught}: Flink's shutdown-hook errors stay off the console, others not. */
class UncaughtAtExitTest {

    private static String printed(String threadName) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Main.uncaught(
                new Thread(() -> {}, threadName),
                new NoClassDefFoundError("scala/collection/convert/Wrappers$JSetWrapper"),
                err);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void anErrorInFlinksShutdownHookIsNotPrinted() {
        assertThat(printed("flink-shutdown-hook-1")).isEmpty();
    }

    @Test
    void anErrorInAnyOtherThreadIsPrintedAsTheJvmWould() {
        assertThat(printed("main-worker"))
                .startsWith("Exception in thread \"main-worker\" java.lang.NoClassDefFoundError")
                .contains("Wrappers$JSetWrapper");
    }
}
