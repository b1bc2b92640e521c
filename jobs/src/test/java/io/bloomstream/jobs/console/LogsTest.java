package io.bloomstream.jobs.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link Logs}: Flink's log of a local run holds the text of rejected records, so it is
 * kept private (a directory per user, 0700, files 0600).
 */
class LogsTest {

    @TempDir Path tmp;

    @Test
    void theDefaultDirectoryIsOnePerUser() {
        assertThat(Logs.defaultDir(null, "/tmp", "alice"))
                .isEqualTo(Path.of("/tmp", "bloomstream-logs-alice"));
        assertThat(Logs.defaultDir("", "/tmp", "alice"))
                .isEqualTo(Path.of("/tmp", "bloomstream-logs-alice"));
        assertThat(Logs.defaultDir("/var/log/mine", "/tmp", "alice"))
                .isEqualTo(Path.of("/var/log/mine"));
        // a user name is a file name, never a path
        assertThat(Logs.defaultDir(null, "/tmp", "../e/vil"))
                .isEqualTo(Path.of("/tmp", "bloomstream-logs-.._e_vil"));
    }

    @Test
    void aNewLogFileAndItsNewDirectoryArePrivate() throws Exception {
        Path file = tmp.resolve("logs/run.log");
        assertThat(Logs.configure("test", false, file)).isEqualTo(file);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())))
                .isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
    }

    @Test
    void theDefaultDirectoryIsMadePrivateAndASymbolicLinkIsRefused() throws Exception {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        Logs.privateDir(shared);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)))
                .isEqualTo("rwx------");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), shared);
        assertThatThrownBy(() -> Logs.privateDir(link))
                .hasMessageContaining(link + " is a symbolic link")
                .hasMessageContaining(Logs.DIR_VARIABLE);
    }
}
