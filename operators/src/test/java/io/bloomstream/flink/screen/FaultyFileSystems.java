package io.bloomstream.flink.screen;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * Test file systems over the local one (registered through {@code META-INF/services}), for errors a
 * local file cannot produce when the tests run as root: {@code denied://} finds files but opening
 * one fails as an object store's permission error does; {@code flaky://} fails every open with a
 * timeout; {@code short://} reports every file {@value #SHORT_BY} bytes longer than it is (as a
 * store that lists a file while it is being replaced).
 */
public final class FaultyFileSystems {

    private FaultyFileSystems() {}

    /** {@code denied:///local/path}. */
    public static final class Denied implements FileSystemFactory {
        @Override
        public String getScheme() {
            return "denied";
        }

        @Override
        public FileSystem create(URI fsUri) {
            return new Faulty(
                    fsUri,
                    p -> new AccessDeniedException(p.toString(), null, "403 Forbidden (test)"));
        }
    }

    /** {@code flaky:///local/path}. */
    public static final class Flaky implements FileSystemFactory {
        @Override
        public String getScheme() {
            return "flaky";
        }

        @Override
        public FileSystem create(URI fsUri) {
            return new Faulty(fsUri, p -> new SocketTimeoutException("read timed out (test)"));
        }
    }

    /** How many bytes {@code short://} files are shorter than their reported length. */
    public static final long SHORT_BY = 1000;

    /** {@code short:///local/path}. */
    public static final class Short implements FileSystemFactory {
        @Override
        public String getScheme() {
            return "short";
        }

        @Override
        public FileSystem create(URI fsUri) {
            URI uri = URI.create("short:///");
            return new LocalFileSystem() {
                @Override
                public URI getUri() {
                    return uri;
                }

                @Override
                public FileStatus getFileStatus(Path f) throws IOException {
                    FileStatus s = super.getFileStatus(f);
                    return new org.apache.flink.core.fs.local.LocalFileStatus(
                            new java.io.File(f.toUri().getPath()), this) {
                        @Override
                        public long getLen() {
                            return s.getLen() + SHORT_BY;
                        }
                    };
                }
            };
        }
    }

    interface Failure {
        IOException on(Path p);
    }

    static final class Faulty extends LocalFileSystem {
        private final URI uri;
        private final Failure failure;

        Faulty(URI uri, Failure failure) {
            this.uri = URI.create(uri.getScheme() + ":///");
            this.failure = failure;
        }

        @Override
        public URI getUri() {
            return uri;
        }

        @Override
        public FSDataInputStream open(Path f) throws IOException {
            throw failure.on(f);
        }

        @Override
        public FSDataInputStream open(Path f, int bufferSize) throws IOException {
            throw failure.on(f);
        }
    }
}
