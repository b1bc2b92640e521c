package io.bloomstream.jobs.tools;

import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.filter.Hasher;
import io.bloomstream.jobs.console.FileErrors;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads local filter files for the offline tools, with errors that name the file. */
final class FilterFiles {

    private FilterFiles() {}

    /**
     * Reads a filter file; {@code keyed} is the hasher of {@code --key-file}/{@code --key-env}, or
     * null. A keyed file read without a key, or with another key, says so and names the flags; a
     * key given for an unkeyed (XXH3) file is refused naming the file's hash, rather than ignored.
     */
    static FilterFile read(Path file, Hasher keyed) throws IOException {
        FilterFile read = readFile(file, keyed);
        Hasher found = read.filter().hasher();
        if (keyed != null && !found.strategy().isKeyed()) {
            throw new IOException(
                    file
                            + ": not a keyed filter file (its hash is "
                            + found.strategy()
                            + ", which takes no key): leave out --key-file/--key-env");
        }
        return read;
    }

    private static FilterFile readFile(Path file, Hasher keyed) throws IOException {
        String unreadable = FileErrors.unreadable(file);
        if (unreadable != null) {
            throw new IOException(file + ": " + unreadable);
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            return FilterCodec.readFile(in, Files.size(file), keyed);
        } catch (FilterFormatException e) {
            if (e.needsKey()) {
                throw new IOException(
                        file
                                + ": a keyed (SipHash-2-4) filter file: give its key with --key-file"
                                + " FILE or --key-env VAR",
                        e);
            }
            if (e.field().equals("seed") && keyed != null) {
                throw new IOException(
                        file
                                + ": a keyed filter file made with another key (the key's check"
                                + " value does not match the file's): wrong key",
                        e);
            }
            throw new IOException(
                    file + ": not a valid filter file (field " + e.field() + "): " + e.getMessage(),
                    e);
        }
    }
}
