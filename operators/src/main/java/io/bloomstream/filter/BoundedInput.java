package io.bloomstream.filter;

import static io.bloomstream.filter.FilterFormat.TRAILER_BYTES;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

/**
 * Reads big-endian fields, tracks what is left of the declared length, and checks the CRC at the
 * end unless it was verified before parsing.
 */
final class BoundedInput {
    private final InputStream raw;
    private final CRC32C crc; // null when the checksum was verified up front
    private final Integer verifiedCrc;
    private final DataInputStream data;
    private long remaining; // bytes left before the trailer

    BoundedInput(InputStream in, long length, Integer verifiedCrc) {
        this.raw = in;
        this.verifiedCrc = verifiedCrc;
        this.crc = verifiedCrc != null ? null : new CRC32C();
        this.data = new DataInputStream(crc == null ? in : new CheckedInputStream(in, crc));
        this.remaining = length - TRAILER_BYTES;
    }

    /** Fails unless at least {@code bytes} remain before the trailer. */
    void require(long bytes, String field) throws FilterFormatException {
        if (bytes < 0 || bytes > remaining) {
            throw new FilterFormatException(
                    field,
                    "needs "
                            + bytes
                            + " more bytes but the input has "
                            + Math.max(0, remaining)
                            + ": truncated or corrupt");
        }
    }

    private void take(int bytes) throws FilterFormatException {
        require(bytes, "length");
        remaining -= bytes;
    }

    int readUnsignedByte() throws IOException {
        take(1);
        return data.readUnsignedByte();
    }

    int readInt() throws IOException {
        take(4);
        return data.readInt();
    }

    long readLong() throws IOException {
        take(8);
        return data.readLong();
    }

    double readDouble() throws IOException {
        take(8);
        return data.readDouble();
    }

    /**
     * After a field was refused while the checksum was still unchecked: reads the rest of the input
     * through the checksum and returns the mismatch to report instead, or null if the checksum
     * holds (the refused field is then the writer's, not damage) or cannot be checked (the input
     * ends early). Costs one pass over the rest and no allocation beyond a small buffer.
     */
    FilterFormatException checksumMismatchOfTheRest() throws IOException {
        if (crc == null || remaining < 0) {
            return null;
        }
        while (remaining > 0) {
            long skipped = data.skip(remaining); // CheckedInputStream reads what it skips
            if (skipped <= 0) {
                return null;
            }
            remaining -= skipped;
        }
        int expected = (int) crc.getValue();
        int found;
        try {
            found = new DataInputStream(raw).readInt();
        } catch (EOFException e) {
            return null;
        }
        return found == expected ? null : mismatch(found, expected);
    }

    private static FilterFormatException mismatch(int found, int expected) {
        return new FilterFormatException(
                "crc32c",
                String.format(
                        "checksum mismatch (stored %08x, computed %08x): the data is corrupt",
                        found, expected));
    }

    /** Checks that nothing is left but the trailer, and that the trailer matches; returns it. */
    int finish() throws IOException {
        if (remaining != 0) {
            throw new FilterFormatException(
                    "length", remaining + " unexpected bytes after the body");
        }
        if (crc == null) {
            return verifiedCrc;
        }
        int expected = (int) crc.getValue();
        int found;
        try {
            found = new DataInputStream(raw).readInt();
        } catch (EOFException e) {
            throw new FilterFormatException("crc32c", "missing checksum");
        }
        if (found != expected) {
            throw mismatch(found, expected);
        }
        return found;
    }
}
