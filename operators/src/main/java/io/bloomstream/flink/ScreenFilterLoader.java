package io.bloomstream.flink;

import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import java.io.BufferedInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Loads and validates a screening filter file through Flink's file systems: format, checksum, hash
 * strategy and seed, and normalization. Every failure names the file and the problem.
 */
@Internal
final class ScreenFilterLoader {

    /** A filter file in force: the filter, its path, version and size on disk. */
    record Loaded(MembershipFilter filter, String path, long version, long bytes) {}

    /** A file that cannot be used; {@link #permanent} when retrying cannot help. */
    static final class BadFilterFileException extends IOException {
        private static final long serialVersionUID = 1L;
        private final boolean permanent;

        BadFilterFileException(String path, String problem, boolean permanent, Throwable cause) {
            super("Cannot use screening filter file " + path + ": " + problem, cause);
            this.permanent = permanent;
        }

        boolean permanent() {
            return permanent;
        }
    }

    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(ScreenFilterLoader.class);

    private ScreenFilterLoader() {}

    static Loaded load(String path, long version, Normalization expected, Hasher hasher)
            throws BadFilterFileException {
        Path p;
        long length;
        FilterFile file;
        try {
            p = new Path(path);
            FileSystem fs = p.getFileSystem();
            FileStatus status = fs.getFileStatus(p);
            if (status.isDir()) {
                throw new BadFilterFileException(path, "it is a directory", true, null);
            }
            length = status.getLen();
            try (InputStream in = new BufferedInputStream(fs.open(p), 1 << 16)) {
                file =
                        FilterCodec.readFile(
                                in, length, hasher.strategy().isKeyed() ? hasher : null);
            }
        } catch (BadFilterFileException e) {
            throw e;
        } catch (FileNotFoundException e) {
            throw new BadFilterFileException(path, "it does not exist", true, e);
        } catch (FilterFormatException e) {
            throw new BadFilterFileException(
                    path,
                    "not a valid filter file (field " + e.field() + "): " + e.getMessage(),
                    true,
                    e);
        } catch (IllegalArgumentException e) {
            throw new BadFilterFileException(path, "bad path: " + e.getMessage(), true, e);
        } catch (IOException e) {
            throw new BadFilterFileException(path, "reading failed: " + e, false, e);
        }
        Hasher found = file.filter().hasher();
        if (!found.equals(hasher)) {
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
        return new Loaded(file.filter(), path, version, length);
    }
}
