package io.bloomstream.flink.screen;

import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.Hasher;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * The screening filters decoded in this JVM (a TaskManager), one per file path (as {@link
 * ScreenFilterLoader#normalizedPath} qualifies it, so spellings of one path share), checksum and
 * the keyed hasher it was decoded with (none for a reader without a key: a keyed filter one screen
 * decoded with its key is never handed to a reader that has no key, or another key), shared by the
 * tasks of its slots and counted by reference: the first task to ask decodes the file while the
 * others wait for it, and the last to let go frees it. A filter is never changed after it is
 * decoded; each task reads it through its own {@link io.bloomstream.filter.FilterReader}. The
 * overlay of live updates stays per task. (Per class loader: with the library in the job jar, one
 * cache per job and TaskManager.)
 */
@Internal
final class SharedFilters {

    /** Decodes a file; called by at most one thread at a time per key. */
    interface Decoder {
        FilterFile decode() throws IOException;
    }

    /** What a filter is shared by: {@code keyed} is null for a reader without a key. */
    private record Key(String checksum, String path, Hasher keyed) {}

    /** A use of a shared filter; close it once. */
    static final class Lease implements AutoCloseable {
        private final Key key;
        private final Entry entry;
        private boolean closed;

        private Lease(Key key, Entry entry) {
            this.key = key;
            this.entry = entry;
        }

        FilterFile file() {
            return entry.file;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                release(key, entry);
            }
        }
    }

    private static final class Entry {
        int refs; // guarded by ENTRIES
        FilterFile file; // guarded by this entry; never changed once set
    }

    private static final Map<Key, Entry> ENTRIES = new HashMap<>();

    private SharedFilters() {}

    /**
     * The filter of {@code path} with {@code checksum} decoded with the keyed hasher {@code keyed}
     * (null: none), decoded by {@code decoder} unless another task of this JVM holds it; the
     * decoder's result must have that checksum.
     */
    static Lease acquire(String path, String checksum, Hasher keyed, Decoder decoder)
            throws IOException {
        Key key = new Key(checksum, path, keyed);
        Entry entry;
        synchronized (ENTRIES) {
            entry = ENTRIES.computeIfAbsent(key, k -> new Entry());
            entry.refs++;
        }
        try {
            synchronized (entry) {
                if (entry.file == null) {
                    entry.file = decoder.decode();
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            release(key, entry);
            throw e;
        }
        return new Lease(key, entry);
    }

    private static void release(Key key, Entry entry) {
        synchronized (ENTRIES) {
            if (--entry.refs == 0) {
                ENTRIES.remove(key, entry);
            }
        }
    }

    /**
     * The number of uses of the filter of {@code path} (any spelling) in this JVM, all checksums
     * (for tests).
     */
    static int uses(String spelling) throws IOException {
        String path = ScreenFilterLoader.normalizedPath(spelling);
        synchronized (ENTRIES) {
            int n = 0;
            for (Map.Entry<Key, Entry> e : ENTRIES.entrySet()) {
                if (e.getKey().path().equals(path)) {
                    n += e.getValue().refs;
                }
            }
            return n;
        }
    }
}
