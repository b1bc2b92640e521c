package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.console.FileErrors;
import io.bloomstream.jobs.console.JobFailedException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link FileErrors} and the files the offline tools write and read. */
class FileErrorsTest {

    @TempDir Path tmp;

    @Test
    void buildFilterWritesItsFileWithTheUsualPermissions() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("a@example.com", "b@example.com"));
        Path filter = tmp.resolve("f.bloom");
        Cli cli = new Cli();
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.01"))
                .as(cli.err.toString())
                .isZero();
        // what the umask gives any new file here (0644 under the usual 022), not 0600
        Set<PosixFilePermission> usual =
                Files.getPosixFilePermissions(Files.createFile(tmp.resolve("usual")));
        assertThat(Files.getPosixFilePermissions(filter)).isEqualTo(usual);
        try (var files = Files.list(tmp)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("no temporary file left")
                    .noneMatch(n -> n.endsWith(".tmp"));
        }
    }

    @Test
    void everyFileErrorNamesTheReason() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("a"));
        Path dir = Files.createDirectory(tmp.resolve("dir"));
        String missing = tmp.resolve("missing.txt").toString();

        assertError(
                "--input " + dir + ": is a directory, not a file",
                "build-filter",
                "--input",
                dir.toString(),
                "--output",
                tmp.resolve("f").toString(),
                "--fpp",
                "0.1");
        assertError(
                "--input " + missing + ": no such file",
                "build-filter",
                "--input",
                missing,
                "--output",
                tmp.resolve("f").toString(),
                "--fpp",
                "0.1");
        assertError(
                "--output " + dir + ": is a directory, not a file",
                "build-filter",
                "--input",
                list.toString(),
                "--output",
                dir.toString(),
                "--fpp",
                "0.1");
        assertError(
                "--output "
                        + list.resolve("f.bloom")
                        + ": its parent "
                        + list
                        + " is a file, not a directory",
                "build-filter",
                "--input",
                list.toString(),
                "--output",
                list.resolve("f.bloom").toString(),
                "--fpp",
                "0.1");
        assertError(
                "" + dir + ": is a directory, not a file", "inspect", "--filter", dir.toString());
        assertError(
                "" + missing + ": no such file",
                "query",
                "--filter",
                missing,
                "--input",
                list.toString());
    }

    @Test
    void fileSystemExceptionsSayWhyNotOnlyWhere() {
        // as root the tests cannot be denied a file: the JDK's exception is built here
        assertThat(FileErrors.describe(new AccessDeniedException("/p/f.bloom")))
                .isEqualTo("/p/f.bloom: permission denied");
        assertThat(FileErrors.describe(new NoSuchFileException("/p/f.bloom")))
                .isEqualTo("/p/f.bloom: no such file or directory");
        assertThat(FileErrors.describe(new AccessDeniedException("/a", "/b", null)))
                .isEqualTo("/a -> /b: permission denied");
        assertThat(FileErrors.describe(new IllegalStateException("other"))).isEqualTo("other");
        assertThat(
                        JobFailedException.rootCause(
                                new RuntimeException(new AccessDeniedException("/p/f.bloom"))))
                .isEqualTo("AccessDeniedException: /p/f.bloom: permission denied");
    }

    private static void assertError(String expected, String... args) {
        Cli cli = new Cli();
        int status = cli.run(args);
        assertThat(status).as(cli.err.toString()).isIn(1, 2);
        assertThat(cli.err.toString()).as(String.join(" ", args)).contains(expected);
    }
}
