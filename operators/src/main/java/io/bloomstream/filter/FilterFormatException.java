package io.bloomstream.filter;

import java.io.IOException;

/**
 * The one exception of {@link FilterCodec} for input that is not a valid encoded filter: truncated,
 * corrupted (checksum mismatch), of an unknown version, type or hash strategy, or with a field out
 * of range. {@link #field()} names the offending header field ({@code "crc32c"} for a checksum
 * mismatch, {@code "length"} for truncation, {@value #KEY} for a keyed file read without its keyed
 * {@link Hasher}: see {@link #needsKey()}).
 */
public final class FilterFormatException extends IOException {

    private static final long serialVersionUID = 1L;

    /** The {@link #field()} of a keyed (SipHash) file read without its keyed hasher. */
    public static final String KEY = "key";

    private final String field;

    public FilterFormatException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    /**
     * Whether the file is keyed and was read without its keyed hasher: not a bad file, but one that
     * needs its key (callers say how to give it).
     */
    public boolean needsKey() {
        return field.equals(KEY);
    }

    /** The name of the field that is wrong. */
    public String field() {
        return field;
    }
}
