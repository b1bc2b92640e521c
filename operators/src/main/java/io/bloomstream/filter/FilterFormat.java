package io.bloomstream.filter;

/**
 * The versioned binary format of whole filters and of single pages. Big-endian throughout.
 *
 * <pre>
 * offset size field
 *  0     4    magic       0x424C4F4D ("BLOM")
 *  4     1    version     1
 *  5     1    type        1 bloom, 2 counting, 3 scalable, 4 bloom page, 5 counting page
 *  6     1    strategy    {@link HashStrategy#id()}
 *  7     1    normalization {@link Normalization#id()} of the entries, 0 = not recorded
 *  8     8    seed        {@link Hasher#seed()} (a key check value for keyed strategies)
 * 16     8    bits        m (counters for counting); 0 for scalable
 * 24     4    hashes      k; 0 for scalable
 * 28     4    pageBits    page size, 0 = classic
 * 32     8    itemsAdded  items taken as new (for a page: the page index)
 * 40     ...  body
 * end-4  4    crc32c      CRC32C of every byte before it
 * </pre>
 *
 * <p>Body of bloom and counting filters: one byte, 0 for dense then every word ({@code ceil(m/64)}
 * words for bloom, {@code ceil(m/16)} for counting, 8 bytes each), or 1 for sparse then an int
 * count of non-empty pages and, for each in increasing order, its int index and its words. Body of
 * a scalable filter: initialCapacity (8), fpp (8, IEEE double), growth (4), tightening (8), stage
 * count (4), then each stage as bits (8), hashes (4), pageBits (4), itemsAdded (8) and a bloom
 * body. Body of a page: its words.
 *
 * <p>Decoding checks the magic and the CRC32C before it interprets any other field (inputs parsed
 * as they stream, as the screen and {@code BLOOM_MIGHT_CONTAIN} read files and {@link
 * FilterCodec#readFile} reads inputs of 2 GiB and more, check the CRC at the end; a field refused
 * before then is reported as the checksum mismatch when the rest of the input does not match its
 * CRC, so damage always reads as field {@code crc32c}), checks every field before it allocates
 * anything, and never allocates more than the declared input length can hold: a dense body's words
 * are in the input, and a sparse body's pages are held as pages of their own ({@link PagedWords}),
 * not as the 1 MiB chunks of a filter built by adds, so what a filter of any type and body costs to
 * decode and to hold is a small multiple of its length (at most 16 times, plus a few KiB of fixed
 * objects), however large the filter it declares. Any defect raises {@link FilterFormatException}.
 * The format version and type ids never change meaning; a test locks them with golden files. {@link
 * FilterCodec} is the public entry point; {@link FilterEncoder}, {@link FilterDecoder}, {@link
 * FilterHeader} and {@link BoundedInput} implement it.
 */
final class FilterFormat {

    static final int MAGIC = 0x424C4F4D;

    /** The filter file format of bloomstream 0.1 on (the only one so far). */
    static final int VERSION_1 = 1;

    /** The filter file format written now. */
    static final int VERSION = VERSION_1;

    static final int TYPE_BLOOM = 1;
    static final int TYPE_COUNTING = 2;
    static final int TYPE_SCALABLE = 3;
    static final int TYPE_BLOOM_PAGE = 4;
    static final int TYPE_COUNTING_PAGE = 5;
    static final int HEADER_BYTES = 40;
    static final int TRAILER_BYTES = 4;

    /** Body encodings of bloom and counting filters. */
    static final int DENSE = 0;

    static final int SPARSE = 1;

    private FilterFormat() {}

    /** Bits per cell: 1 for bloom filters, 4 for counting ones. */
    static int cellBits(boolean counting) {
        return counting ? CountingBloomFilter.BITS_PER_COUNTER : 1;
    }

    /** Fails unless {@code magic} is the format's. */
    static void checkMagic(int magic) throws FilterFormatException {
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    "magic", String.format("expected 0x%08X, found 0x%08X", MAGIC, magic));
        }
    }
}
