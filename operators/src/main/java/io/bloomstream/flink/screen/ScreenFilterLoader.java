package io.bloomstream.flink.screen;

import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.filter.FilterReader;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.UnsupportedFileSystemSchemeException;

/**
 * Loads and validates a screening filter file through Flink's file systems: format, checksum, hash
 * strategy and seed, and normalization. Every failure names the file and the problem, and says
 * whether a retry could fix it ({@link BadFilterFileException#permanent}): a missing file, a path
 * without a file system, a permission error or a bad file cannot be fixed by a retry; any other
 * read error (a timeout, a lost connection) can.
 *
 * <p>The file's identity is its CRC32C trailer (the codec's own checksum of its contents), read
 * first with one seek. Filters are shared by the tasks of a JVM ({@link SharedFilters}, keyed by
 * path, checksum and the key they were decoded with) and decoded as the file streams, without a
 * byte-array copy of it.
 */
@Internal
public final class ScreenFilterLoader {

    /**
     * A filter file in force: its reader, path, version, size on disk, checksum, the normalization
     * its header records (null if none) and lease; {@link #release()} it once.
     */
    public record Loaded(
            FilterReader reader,
            String path,
            long version,
            long bytes,
            String checksum,
            Normalization normalization,
            SharedFilters.Lease lease) {
        /** The filter. */
        public MembershipFilter filter() {
            return reader.filter();
        }

        /** Lets go of the shared filter (the last user in the JVM frees it). */
        public void release() {
            lease.close();
        }
    }

    /** A file that cannot be used; {@link #permanent} when retrying cannot help. */
    public static class BadFilterFileException extends IOException {
        private static final long serialVersionUID = 1L;
        private final boolean permanent;
        private final String problem;

        BadFilterFileException(String path, String problem, boolean permanent, Throwable cause) {
            super("Cannot use screening filter file " + path + ": " + problem, cause);
            this.permanent = permanent;
            this.problem = problem;
        }

        boolean permanent() {
            return permanent;
        }

        /** What is wrong with the file, without the path. */
        public String problem() {
            return problem;
        }
    }

    /** The file at the path is not the one the restored version was loaded from. */
    static final class ChangedFileException extends BadFilterFileException {
        private static final long serialVersionUID = 1L;

        ChangedFileException(String path, long version, String recorded, String found) {
            super(
                    path,
                    "it changed since filter version "
                            + version
                            + " was loaded from it (checksum recorded "
                            + recorded
                            + ", found "
                            + found
                            + "); the screen will not screen with other contents under the same"
                            + " version: put the original file back, or load the new file as a"
                            + " new version (a load command, or a redeploy with a higher"
                            + " initialVersion)",
                    true,
                    null);
        }
    }

    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(ScreenFilterLoader.class);

    private ScreenFilterLoader() {}

    /**
     * Loads {@code path} as {@code version}.
     *
     * @param expectedChecksum the checksum recorded when this version was loaded before (restore),
     *     or null for a new version
     */
    static Loaded load(
            String path,
            long version,
            String expectedChecksum,
            Normalization expected,
            Hasher hasher)
            throws BadFilterFileException {
        Loaded loaded =
                open(path, version, expectedChecksum, hasher.strategy().isKeyed() ? hasher : null);
        try {
            validate(path, loaded, expected, hasher);
            return loaded;
        } catch (BadFilterFileException | RuntimeException e) {
            loaded.release();
            throw e;
        }
    }

    /**
     * Loads {@code path} for a reader that takes the file's own hash and normalization (SQL's
     * {@code BLOOM_MIGHT_CONTAIN}): every check of the screen except that the hash and
     * normalization match a configuration. A keyed filter cannot be loaded this way (there is no
     * key), and the problem of a file that cannot be used never quotes its bytes, its size or an
     * exception's text: the caller may not be allowed to read the file.
     */
    public static Loaded loadAsRecorded(String path) throws BadFilterFileException {
        Loaded loaded;
        try {
            loaded = open(path, 0, null, null);
        } catch (BadFilterFileException e) {
            throw new BadFilterFileException(path, withoutDetails(e), e.permanent(), null);
        }
        if (loaded.filter().hasher().strategy().isKeyed()) {
            loaded.release();
            throw new BadFilterFileException(path, KEYED_IN_SQL, true, null);
        }
        return loaded;
    }

    private static final String KEYED_IN_SQL =
            "it is a keyed (SipHash-2-4) filter file: keyed filters cannot be used in SQL (SQL has"
                    + " no key)";

    /** The problem of {@code e} without the file's bytes or size or an exception's text. */
    static String withoutDetails(BadFilterFileException e) {
        Throwable cause = e.getCause();
        if (cause == null) {
            return e.problem(); // our own words: a directory, a file that changed while read
        }
        if (cause instanceof FilterFormatException f) {
            return withoutContents(f);
        }
        if (cause instanceof FileNotFoundException || cause instanceof NoSuchFileException) {
            return "it does not exist";
        }
        if (isAccessControl(cause)) {
            return "permission denied";
        }
        if (cause instanceof UnsupportedFileSystemSchemeException) {
            return "no file system for its scheme";
        }
        if (cause instanceof IllegalArgumentException) {
            return "bad path";
        }
        return e.permanent() ? "reading failed" : "reading failed; a retry may help";
    }

    /** What is wrong with a file, without quoting its bytes or its size. */
    static String withoutContents(FilterFormatException f) {
        if (f.needsKey()) {
            return KEYED_IN_SQL;
        }
        switch (f.field()) {
            case "magic":
                return "it is not a filter file";
            case "length":
                return "it is truncated, or not a filter file";
            case "crc32c":
                return "not a valid filter file (field crc32c): its checksum does not match, the"
                        + " file is corrupt or truncated";
            case "strategy":
                return "not a valid filter file (field strategy): an unknown hash strategy";
            default:
                return "not a valid filter file (field "
                        + f.field()
                        + "): out of range, or of another version";
        }
    }

    /**
     * The path as Flink's file system qualifies it ({@code /a/./b}, {@code /a//b}, {@code
     * file:///a/b} are all {@code file:/a/b}): the key of the filters shared in a JVM.
     *
     * @throws BadFilterFileException if the path is malformed or has no file system
     */
    public static String normalizedPath(String path) throws BadFilterFileException {
        try {
            Path p = new Path(path);
            return p.makeQualified(p.getFileSystem()).toString();
        } catch (IOException | IllegalArgumentException e) {
            throw classify(path, e);
        }
    }

    private static Loaded open(String path, long version, String expectedChecksum, Hasher keyed)
            throws BadFilterFileException {
        FileSystem fs;
        Path p;
        long length;
        String checksum;
        String key;
        try {
            p = new Path(path);
            fs = p.getFileSystem();
            key = p.makeQualified(fs).toString();
            FileStatus status = fs.getFileStatus(p);
            if (status.isDir()) {
                throw new BadFilterFileException(path, "it is a directory", true, null);
            }
            length = status.getLen();
            checksum = trailer(fs, p, length);
        } catch (IOException | IllegalArgumentException e) {
            throw classify(path, e);
        }
        if (expectedChecksum != null && !expectedChecksum.equals(checksum)) {
            throw new ChangedFileException(path, version, expectedChecksum, checksum);
        }
        SharedFilters.Lease lease;
        try {
            lease = SharedFilters.acquire(key, checksum, keyed, () -> decode(fs, p, length, keyed));
        } catch (IOException | IllegalArgumentException e) {
            throw classify(path, e);
        }
        try {
            FilterFile file = lease.file();
            if (!file.checksumHex().equals(checksum)) {
                throw new BadFilterFileException(
                        path, "it changed while it was read; retrying", false, null);
            }
            return new Loaded(
                    FilterReader.of(file.filter()),
                    path,
                    version,
                    length,
                    checksum,
                    file.normalization(),
                    lease);
        } catch (BadFilterFileException | RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    /** The CRC32C trailer of the file: its last 4 bytes, as 8 hex digits. */
    private static String trailer(FileSystem fs, Path p, long length) throws IOException {
        if (length < 44) {
            throw new FilterFormatException(
                    "length", "needs at least 44 bytes, has " + length + ": not a filter file");
        }
        try (FSDataInputStream in = fs.open(p)) {
            in.seek(length - 4);
            byte[] b = in.readNBytes(4);
            if (b.length < 4) {
                throw new EOFException("file shorter than its length " + length);
            }
            return String.format("%08x", java.nio.ByteBuffer.wrap(b).getInt());
        }
    }

    private static FilterFile decode(FileSystem fs, Path p, long length, Hasher keyed)
            throws IOException {
        try (InputStream in = new BufferedInputStream(fs.open(p), 1 << 16)) {
            return FilterCodec.readFileStreaming(in, length, keyed);
        }
    }

    /** Whether a retry could fix {@code e}, and what to call it. */
    static BadFilterFileException classify(String path, Exception e) {
        if (e instanceof BadFilterFileException b) {
            return b;
        }
        if (e instanceof FilterFormatException f && f.needsKey()) {
            return new BadFilterFileException(
                    path,
                    "it is a keyed (SipHash-2-4) filter file: screen it with its key"
                            + " (ScreenConfig.sipHashKey; screen --key-file or --key-env)",
                    true,
                    e);
        }
        if (e instanceof FilterFormatException f) {
            return new BadFilterFileException(
                    path,
                    "not a valid filter file (field " + f.field() + "): " + f.getMessage(),
                    true,
                    e);
        }
        if (e instanceof FileNotFoundException || e instanceof NoSuchFileException) {
            return new BadFilterFileException(path, "it does not exist", true, e);
        }
        if (e instanceof AccessDeniedException || isAccessControl(e)) {
            return new BadFilterFileException(path, "permission denied: " + e, true, e);
        }
        if (e instanceof UnsupportedFileSystemSchemeException) {
            return new BadFilterFileException(
                    path, "no file system for its scheme: " + e.getMessage(), true, e);
        }
        if (e instanceof IllegalArgumentException) {
            return new BadFilterFileException(path, "bad path: " + e.getMessage(), true, e);
        }
        return new BadFilterFileException(path, "reading failed: " + e, false, e);
    }

    /** Hadoop's and the object stores' permission errors, without depending on them. */
    private static boolean isAccessControl(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String name = t.getClass().getSimpleName();
            if (t instanceof AccessDeniedException
                    || name.equals("AccessControlException")
                    || name.equals("AccessDeniedException")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a file built with {@code found} serves a screen configured with {@code expected}. The
     * file's reader probes with the file's own strategy, so either XXH3 width (0.4's XXH3-128 and
     * {@code BloomFilter.create(n, p)}'s XXH3-64) serves an XXH3 screen with the same seed; a keyed
     * screen needs a file of the same keyed hash and key.
     */
    static boolean sameHashFamily(Hasher found, Hasher expected) {
        if (found.equals(expected)) {
            return true;
        }
        return !found.strategy().isKeyed()
                && !expected.strategy().isKeyed()
                && found.seed() == expected.seed();
    }

    private static void validate(String path, Loaded file, Normalization expected, Hasher hasher)
            throws BadFilterFileException {
        Hasher found = file.filter().hasher();
        if (!sameHashFamily(found, hasher)) {
            throw new BadFilterFileException(
                    path,
                    "built with hash "
                            + found
                            + " but the screen expects "
                            + hasher
                            + "; rebuild it or configure the screen's seed or key to match",
                    true,
                    null);
        }
        if (file.normalization() == null) {
            LOG.warn(
                    "Screening filter file {} does not record its normalization; assuming its"
                            + " entries were normalized with '{}' as configured",
                    path,
                    expected);
        } else if (file.normalization() != expected) {
            throw new BadFilterFileException(
                    path,
                    "built with normalization '"
                            + file.normalization()
                            + "' but the screen normalizes with '"
                            + expected
                            + "'; its entries would never match",
                    true,
                    null);
        }
    }
}
