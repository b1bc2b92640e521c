package io.bloomstream.jobs.console;

import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;

/**
 * File errors that say why, not only where. The JDK reports a denied permission, a missing file and
 * an existing one with the path alone as the message ({@code AccessDeniedException: /p/f.bloom});
 * these name the reason.
 */
public final class FileErrors {

    private FileErrors() {}

    /**
     * One line for {@code e}: for a file system error, the path (and the other path of a move or
     * copy) and the reason; else the exception's message.
     */
    public static String describe(Throwable e) {
        if (!(e instanceof FileSystemException)) {
            return e.getMessage();
        }
        FileSystemException f = (FileSystemException) e;
        String where =
                f.getFile() == null
                        ? ""
                        : f.getFile() + (f.getOtherFile() == null ? "" : " -> " + f.getOtherFile());
        return (where.isEmpty() ? "" : where + ": ") + reason(f);
    }

    private static String reason(FileSystemException f) {
        if (f instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (f instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (f instanceof FileAlreadyExistsException) {
            return "already exists";
        }
        if (f instanceof NotDirectoryException) {
            return "not a directory";
        }
        if (f instanceof DirectoryNotEmptyException) {
            return "a directory that is not empty";
        }
        return f.getReason() != null ? f.getReason() : "file system error";
    }

    /**
     * Why {@code file} cannot be read as a file, or null if it can: it is missing, a directory, or
     * not readable (permission denied).
     */
    public static String unreadable(Path file) {
        if (Files.isDirectory(file)) {
            return "is a directory, not a file";
        }
        if (!Files.exists(file)) {
            return Files.exists(file.toAbsolutePath().getParent())
                    ? "no such file"
                    : "no such file (nor its directory)";
        }
        if (!Files.isReadable(file)) {
            return "permission denied";
        }
        return null;
    }

    /**
     * {@link #unreadable} of {@code path}, a local path or {@code file:} URI; null for another file
     * system (whose errors come from the job that reads it).
     */
    public static String unreadableLocal(String path) {
        java.net.URI uri = new org.apache.flink.core.fs.Path(path).toUri();
        if (uri.getScheme() != null && !"file".equals(uri.getScheme())) {
            return null;
        }
        return unreadable(Path.of(uri.getPath()));
    }

    /** Why {@code file} cannot be written as a file, or null if nothing stands in the way yet. */
    public static String unwritable(Path file) {
        if (Files.isDirectory(file)) {
            return "is a directory, not a file";
        }
        for (Path p = file.toAbsolutePath().getParent(); p != null; p = p.getParent()) {
            if (Files.exists(p)) {
                if (!Files.isDirectory(p)) {
                    return "its parent " + p + " is a file, not a directory";
                }
                if (!Files.isWritable(p)) {
                    return "permission denied (directory " + p + ")";
                }
                return null;
            }
        }
        return null;
    }
}
