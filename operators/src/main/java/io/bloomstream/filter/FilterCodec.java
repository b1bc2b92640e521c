package io.bloomstream.filter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Reads and writes whole filters and single pages in the versioned binary format described in
 * {@link FilterFormat}: big-endian, a 40-byte header (magic "BLOM", version, type, hash strategy,
 * normalization, seed, shape, items), a dense or sparse body and a CRC32C trailer.
 *
 * <p>Decoding checks the magic and the CRC32C before it interprets any other field, checks every
 * field before it allocates anything, and never allocates more than the declared input length can
 * hold (at most 16 times the input's length, plus a few KiB, for every type and body, however large
 * the filter it declares); any defect raises {@link FilterFormatException}. Every operation on a
 * decoded filter (estimates, unions, encoding, walking its pages) costs in proportion to its
 * non-empty pages, not to the pages it declares. The format version and type ids never change
 * meaning; a test locks them with golden files.
 */
public final class FilterCodec {

    private FilterCodec() {}

    /** Encodes a filter. */
    public static byte[] encode(MembershipFilter filter) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            write(filter, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** Encodes a filter with the normalization its entries were built with. */
    public static byte[] encode(MembershipFilter filter, Normalization normalization) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            write(filter, normalization, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** Writes a filter to {@code out} (not closed), recording no normalization. */
    public static void write(MembershipFilter filter, OutputStream out) throws IOException {
        write(filter, null, out);
    }

    /**
     * Writes a filter to {@code out} (not closed) as it streams: no second copy of the filter is
     * made, so a filter of any size needs no more heap than itself.
     *
     * @param normalization how the entries were normalized, or null if not recorded
     */
    public static void write(MembershipFilter filter, Normalization normalization, OutputStream out)
            throws IOException {
        FilterEncoder.write(filter, normalization, out);
    }

    /**
     * Encodes one page of a filter (for state, deltas and transfers): its spec, index and words.
     *
     * @param counting whether the words are 4-bit counters
     */
    public static byte[] encodePage(
            FilterSpec spec, boolean counting, long pageIndex, long[] words) {
        return FilterEncoder.encodePage(spec, counting, pageIndex, words);
    }

    /**
     * Decodes a filter of an unkeyed strategy.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     */
    public static MembershipFilter decode(byte[] bytes) throws FilterFormatException {
        return decode(bytes, null);
    }

    /**
     * Decodes a filter, with {@code keyedHasher} supplying the key of a keyed strategy (its key
     * check value must match the file's seed field); null for unkeyed filters.
     *
     * @throws FilterFormatException if the bytes are not a valid filter, or the key is missing or
     *     wrong
     */
    public static MembershipFilter decode(byte[] bytes, Hasher keyedHasher)
            throws FilterFormatException {
        return decodeFile(bytes, keyedHasher).filter();
    }

    /**
     * Decodes a filter with the normalization its header records; see {@link #decode(byte[],
     * Hasher)}.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     */
    public static FilterFile decodeFile(byte[] bytes, Hasher keyedHasher)
            throws FilterFormatException {
        return FilterDecoder.decodeFile(bytes, keyedHasher);
    }

    /**
     * Reads one filter of exactly {@code length} bytes from {@code in} (not closed).
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     * @throws IOException if reading fails
     */
    public static MembershipFilter read(InputStream in, long length, Hasher keyedHasher)
            throws IOException {
        return readFile(in, length, keyedHasher).filter();
    }

    /**
     * Reads one filter of exactly {@code length} bytes from {@code in} (not closed), with the
     * normalization its header records.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     * @throws IOException if reading fails
     */
    public static FilterFile readFile(InputStream in, long length, Hasher keyedHasher)
            throws IOException {
        return FilterDecoder.readFile(in, length, keyedHasher);
    }

    /**
     * Reads one filter of exactly {@code length} bytes from {@code in} (not closed) as it streams,
     * without a copy of the input in memory (the screen's and {@code BLOOM_MIGHT_CONTAIN}'s path),
     * so the CRC32C is checked at the end: a field refused before then is reported as the checksum
     * mismatch (field {@code crc32c}) when the rest of the input does not match its checksum, so
     * damage reads as damage, not as the field it hit.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     * @throws IOException if reading fails
     */
    public static FilterFile readFileStreaming(InputStream in, long length, Hasher keyedHasher)
            throws IOException {
        return FilterDecoder.readStreaming(in, length, keyedHasher);
    }

    /**
     * The normalization a filter's header records, read from its first 8 bytes without reading the
     * filter (the checksum is not verified: decode the file for that).
     *
     * @return the normalization, or null when the header records none
     * @throws FilterFormatException if the input is shorter than 8 bytes, its magic is wrong or the
     *     normalization id unknown
     */
    public static Normalization readNormalization(InputStream in) throws IOException {
        return FilterDecoder.readNormalization(in);
    }

    /** A decoded page: its filter's spec, whether it holds counters, its index and words. */
    public record Page(FilterSpec spec, boolean counting, long index, long[] words) {}

    /**
     * Decodes a page written by {@link #encodePage}.
     *
     * @throws FilterFormatException if the bytes are not a valid page
     */
    public static Page decodePage(byte[] bytes, Hasher keyedHasher) throws FilterFormatException {
        return FilterDecoder.decodePage(bytes, keyedHasher);
    }
}
