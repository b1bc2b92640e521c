package io.bloomstream.filter;

import java.util.Objects;

/**
 * A filter read from the binary format with what its header says about how it was built.
 *
 * @param filter the filter
 * @param normalization the normalization its entries were built with, or null when the file does
 *     not record one (filters written by the library API without one)
 */
public record FilterFile(MembershipFilter filter, Normalization normalization) {
    /** Checks the filter. */
    public FilterFile {
        Objects.requireNonNull(filter, "filter");
    }
}
