package io.bloomstream.jobs.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Temporary files an offline tool writes next to its output (a filter file before its atomic
 * rename, a pipe's entries): deleted when the tool is done with them, when it fails, and when the
 * JVM is stopped (Ctrl-C, SIGTERM) while they exist, by a shutdown hook that {@link #close()}
 * removes. A killed JVM ({@code kill -9}) runs no hook: the files stay, hidden ({@code
 * .build-filter-} names, each with a random part), for the user to delete; no later run looks for
 * them (it cannot tell one left behind from one another run is writing).
 */
final class TempFiles implements AutoCloseable {

    private final Set<Path> files = ConcurrentHashMap.newKeySet();
    private final Thread hook = new Thread(this::deleteAll, "bloomstream-temp-files");

    /** Starts tracking; the shutdown hook is registered now. */
    TempFiles() {
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * A new empty file in {@code dir} (created first if missing) named {@code
     * .build-filter-RANDOM.SUFFIX}, deleted on {@link #close()} or at exit unless {@link #keep
     * kept}; created with the usual permissions (the umask's, as any file the user writes: a
     * TaskManager running as another user must read the filter), not {@link Files#createTempFile}'s
     * owner-only 0600.
     */
    Path create(Path dir, String suffix) throws IOException {
        return create(dir, suffix, false);
    }

    /**
     * As {@link #create(Path, String)}, but readable and writable by its owner alone ({@code
     * rw-------}) where the file system has POSIX permissions (elsewhere, as the directory gives):
     * for a file no one else needs that holds what should not be shown (a list a key hides).
     */
    Path createPrivate(Path dir, String suffix) throws IOException {
        return create(dir, suffix, true);
    }

    private Path create(Path dir, String suffix, boolean ownerOnly) throws IOException {
        Files.createDirectories(dir);
        FileAttribute<?>[] attributes =
                ownerOnly && Files.getFileStore(dir).supportsFileAttributeView("posix")
                        ? new FileAttribute<?>[] {
                            PosixFilePermissions.asFileAttribute(
                                    PosixFilePermissions.fromString("rw-------"))
                        }
                        : new FileAttribute<?>[0];
        java.util.Random random = new java.security.SecureRandom();
        for (int attempt = 0; ; attempt++) {
            Path p =
                    dir.resolve(
                            ".build-filter-"
                                    + Long.toUnsignedString(random.nextLong())
                                    + "."
                                    + suffix);
            try {
                files.add(p);
                return Files.createFile(p, attributes);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                files.remove(p);
                if (attempt >= 100) {
                    throw e;
                }
            }
        }
    }

    /**
     * Opens a file that {@link #create} made, for writing from its start, without ever creating it
     * again: if the shutdown hook has deleted it (a SIGTERM between its creation and this call),
     * the open fails rather than leave a new file behind after the hook has run.
     */
    static java.io.OutputStream open(Path file) throws IOException {
        return Files.newOutputStream(
                file,
                java.nio.file.StandardOpenOption.WRITE,
                java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
    }

    /** Stops tracking {@code file} (renamed into place: no longer temporary). */
    void keep(Path file) {
        files.remove(file);
    }

    private void deleteAll() {
        for (Path p : files) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // best effort: at exit there is no one left to tell
            }
            files.remove(p);
        }
    }

    /** Deletes the files still tracked and removes the shutdown hook. */
    @Override
    public void close() {
        deleteAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs, or has run
        }
    }
}
