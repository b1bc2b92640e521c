package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.jobs.Cli;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the lock of a {@link StateDir}: a second run on a directory in use is refused with the
 * holder's pid, in this process and from another one; a lock left by a run that died is taken over
 * and reported.
 */
class StateDirLockTest {

    @TempDir Path tmp;

    @Test
    void refusesASecondHolderInTheSameProcessAndReleasesOnClose() throws Exception {
        Path dir = tmp.resolve("state");
        try (StateDirLock first = StateDirLock.take(dir)) {
            assertThat(first.previousPid()).isEmpty();
            assertThatThrownBy(() -> StateDirLock.take(dir))
                    .isInstanceOf(StateDir.RefusedException.class)
                    .hasMessageContaining("--state-dir " + dir + " is in use by another run")
                    .hasMessageContaining("pid " + ProcessHandle.current().pid());
            // the lock file does not make the directory "not a state directory"
            StateDir.open(dir, "dedup", Map.of());
        }
        try (StateDirLock again = StateDirLock.take(dir)) {
            assertThat(again.previousPid()).as("released cleanly: not stale").isEmpty();
        }
    }

    @Test
    void refusesADirectoryLockedByAnotherProcess() throws Exception {
        Path dir = tmp.resolve("state");
        Process holder =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                LockHolder.class.getName(),
                                dir.toString())
                        .redirectErrorStream(true)
                        .start();
        try {
            BufferedReader out =
                    new BufferedReader(
                            new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("locked");
            assertThatThrownBy(() -> StateDirLock.take(dir))
                    .isInstanceOf(StateDir.RefusedException.class)
                    .hasMessageContaining("is in use by another run (pid " + holder.pid());
            // the command line refuses it before any job starts, with status 2
            Cli cli = new Cli();
            Path input = Files.writeString(tmp.resolve("in.txt"), "a\n");
            assertThat(
                            cli.run(
                                    "dedup",
                                    "--state-dir",
                                    dir.toString(),
                                    "--input",
                                    input.toString(),
                                    "--output",
                                    tmp.resolve("out").toString()))
                    .isEqualTo(2);
            assertThat(cli.err.toString())
                    .contains("is in use by another run (pid " + holder.pid());
        } finally {
            holder.getOutputStream().close(); // the holder exits at the end of its stdin
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void takesOverTheLockOfARunThatDied() throws Exception {
        Path dir = tmp.resolve("state");
        Files.createDirectories(dir);
        // a pid that ran and ended: what a run killed with kill -9 leaves in the lock file
        Process gone =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-version")
                        .redirectErrorStream(true)
                        .start();
        gone.getInputStream().readAllBytes();
        assertThat(gone.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Files.writeString(
                dir.resolve(StateDir.LOCK),
                "pid=" + gone.pid() + "\nstarted=2026-11-27T09:00:00Z\n");
        try (StateDirLock lock = StateDirLock.take(dir)) {
            assertThat(lock.previousPid()).hasValue(gone.pid());
            assertThat(Files.readString(dir.resolve(StateDir.LOCK)))
                    .contains("pid=" + ProcessHandle.current().pid());
        }
        assertThat(Files.readString(dir.resolve(StateDir.LOCK))).isEmpty();
    }

    /** Holds the lock of the directory in {@code args[0]} until its stdin ends. */
    public static final class LockHolder {
        public static void main(String[] args) throws Exception {
            try (StateDirLock lock = StateDirLock.take(Path.of(args[0]))) {
                System.out.println("locked");
                System.out.flush();
                System.in.readAllBytes();
            }
        }
    }
}
