package io.bloomstream.filter;

import java.util.Objects;

/**
 * A filter read from the binary format with what its header says about how it was built.
 *
 * @param filter the filter
 * @param normalization the normalization its entries were built with, or null when the file does
 *     not record one (filters written by the library API without one)
 * @param crc32c the file's own checksum: its CRC32C trailer (the CRC32C of every byte before it),
 *     verified by the decoder; it identifies the file's contents
 */
public record FilterFile(MembershipFilter filter, Normalization normalization, int crc32c) {
    /** Checks the filter. */
    public FilterFile {
        Objects.requireNonNull(filter, "filter");
    }

    /** The checksum as 8 lowercase hex digits, as logs and the screen's state show it. */
    public String checksumHex() {
        return String.format("%08x", crc32c);
    }
}
