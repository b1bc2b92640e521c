package io.bloomstream.filter;

import java.io.IOException;

/**
 * The one exception of {@link FilterCodec} for input that is not a valid encoded filter: truncated,
 * corrupted (checksum mismatch), of an unknown version, type or hash strategy, or with a field out
 * of range. {@link #field()} names the offending header field ({@code "crc32c"} for a checksum
 * mismatch, {@code "length"} for truncation).
 */
public final class FilterFormatException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String field;

    public FilterFormatException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    /** The name of the field that is wrong. */
    public String field() {
        return field;
    }
}
