package io.bloomstream.jobs.tools;

import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.jobs.console.FileErrors;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads local filter files for the offline tools, with errors that name the file. */
final class FilterFiles {

    private FilterFiles() {}

    static FilterFile read(Path file) throws IOException {
        String unreadable = FileErrors.unreadable(file);
        if (unreadable != null) {
            throw new IOException(file + ": " + unreadable);
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            return FilterCodec.readFile(in, Files.size(file), null);
        } catch (FilterFormatException e) {
            throw new IOException(
                    file + ": not a valid filter file (field " + e.field() + "): " + e.getMessage(),
                    e);
        }
    }
}
