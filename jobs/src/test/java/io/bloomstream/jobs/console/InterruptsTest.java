package io.bloomstream.jobs.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Tests for {@link Interrupts}. */
class InterruptsTest {

    @Test
    void underTheLauncherTheSameSignalPassedOnCountsOnce() {
        // a window no test run reaches: the second call must not quit (it would end this JVM)
        Interrupts.underLauncher(600_000);
        AtomicBoolean run = Interrupts.register();
        try {
            assertThat(Interrupts.interrupt()).isTrue();
            assertThat(run).isTrue();
            assertThat(Interrupts.interrupt()).isTrue();
            assertThat(run).isTrue();
        } finally {
            Interrupts.unregister(run);
            Interrupts.underLauncher(0);
        }
    }

    @Test
    void withoutARunTheSignalIsTheJvms() {
        assertThat(Interrupts.interrupt()).isFalse();
    }
}
