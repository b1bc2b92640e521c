package io.bloomstream.filter;

import static io.bloomstream.filter.FilterFormat.DENSE;
import static io.bloomstream.filter.FilterFormat.HEADER_BYTES;
import static io.bloomstream.filter.FilterFormat.SPARSE;
import static io.bloomstream.filter.FilterFormat.TRAILER_BYTES;
import static io.bloomstream.filter.FilterFormat.TYPE_BLOOM;
import static io.bloomstream.filter.FilterFormat.TYPE_BLOOM_PAGE;
import static io.bloomstream.filter.FilterFormat.TYPE_COUNTING;
import static io.bloomstream.filter.FilterFormat.TYPE_COUNTING_PAGE;
import static io.bloomstream.filter.FilterFormat.TYPE_SCALABLE;
import static io.bloomstream.filter.FilterFormat.cellBits;
import static io.bloomstream.filter.FilterFormat.checkMagic;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reads filters and pages of the format of {@link FilterFormat}: the magic and the CRC32C are
 * checked before any other field is interpreted (inputs of 2 GiB and more, parsed as they stream,
 * check the CRC at the end), every field is checked before it drives an allocation, and any defect
 * raises {@link FilterFormatException} naming the field.
 */
final class FilterDecoder {

    private FilterDecoder() {}

    /**
     * Decodes a filter with the normalization its header records; see {@link #decode(byte[],
     * Hasher)}.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     */
    static FilterFile decodeFile(byte[] bytes, Hasher keyedHasher) throws FilterFormatException {
        int crc = checkChecksumFirst(bytes);
        try {
            return readStream(new ByteArrayInputStream(bytes), bytes.length, keyedHasher, crc);
        } catch (FilterFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new FilterFormatException("length", "unreadable input: " + e);
        }
    }

    /**
     * Checks magic and CRC32C before any field is interpreted, so corrupted input never drives
     * sizing or allocation; a well-formed file of another version still reports its field.
     */
    static int checkChecksumFirst(byte[] bytes) throws FilterFormatException {
        if (bytes.length < HEADER_BYTES + TRAILER_BYTES) {
            throw new FilterFormatException(
                    "length",
                    "needs at least "
                            + (HEADER_BYTES + TRAILER_BYTES)
                            + " bytes, has "
                            + bytes.length
                            + ": truncated or not a filter");
        }
        checkMagic(java.nio.ByteBuffer.wrap(bytes, 0, 4).getInt());
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - TRAILER_BYTES);
        int stored = java.nio.ByteBuffer.wrap(bytes, bytes.length - TRAILER_BYTES, 4).getInt();
        if (stored != (int) crc.getValue()) {
            throw new FilterFormatException(
                    "crc32c",
                    String.format(
                            "checksum mismatch (stored %08x, computed %08x): the data is corrupt or"
                                    + " truncated",
                            stored, (int) crc.getValue()));
        }
        return stored;
    }

    /**
     * Reads one filter of exactly {@code length} bytes from {@code in} (not closed), with the
     * normalization its header records.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     * @throws IOException if reading fails
     */
    static FilterFile readFile(InputStream in, long length, Hasher keyedHasher) throws IOException {
        if (length >= 0 && length <= Integer.MAX_VALUE - 16) {
            byte[] bytes = in.readNBytes((int) length);
            if (bytes.length != length) {
                throw new FilterFormatException(
                        "length", "declared " + length + " bytes, found " + bytes.length);
            }
            return decodeFile(bytes, keyedHasher);
        }
        return readStreaming(in, length, keyedHasher);
    }

    /** Parses as the bytes stream, checking the CRC at the end: for inputs of 2 GiB and more. */
    static FilterFile readStreaming(InputStream in, long length, Hasher keyedHasher)
            throws IOException {
        return readStream(in, length, keyedHasher, null);
    }

    /**
     * {@code verifiedCrc}: the checksum verified before parsing, or null to check it at the end.
     */
    private static FilterFile readStream(
            InputStream in, long length, Hasher keyedHasher, Integer verifiedCrc)
            throws IOException {
        BoundedInput r = new BoundedInput(in, length, verifiedCrc);
        try {
            return parse(r, keyedHasher);
        } catch (EOFException e) {
            throw new FilterFormatException("length", "unexpected end of input");
        } catch (FilterFormatException e) {
            // Parsed before its checksum was checked: damage must read as damage, not as the
            // field it hit, so the rest is read through the checksum first.
            if (!e.field().equals("magic") && !e.field().equals("crc32c")) {
                FilterFormatException mismatch = r.checksumMismatchOfTheRest();
                if (mismatch != null) {
                    throw mismatch;
                }
            }
            throw e;
        }
    }

    private static FilterFile parse(BoundedInput r, Hasher keyedHasher) throws IOException {
        FilterHeader h = FilterHeader.read(r, keyedHasher);
        MembershipFilter filter;
        switch (h.type) {
            case TYPE_BLOOM:
                {
                    FilterSpec spec = h.spec();
                    PagedWords words = readBody(r, spec, 1);
                    checkUnusedBits(words, spec.bits(), 1);
                    filter = BloomFilter.restore(spec, words, h.itemsAdded);
                    break;
                }
            case TYPE_COUNTING:
                {
                    FilterSpec spec = h.spec();
                    PagedWords words = readBody(r, spec, CountingBloomFilter.BITS_PER_COUNTER);
                    checkUnusedBits(words, spec.bits(), 4);
                    filter = CountingBloomFilter.restore(spec, words, h.itemsAdded);
                    break;
                }
            case TYPE_SCALABLE:
                filter = readScalable(r, h);
                break;
            default:
                throw new FilterFormatException(
                        "type", "a page (type " + h.type + ") is not a filter; use decodePage");
        }
        int crc = r.finish();
        return new FilterFile(filter, h.normalization, crc);
    }

    /**
     * The normalization a filter's header records, read from its first 8 bytes without reading the
     * filter (the checksum is not verified: decode the file for that).
     *
     * @return the normalization, or null when the header records none
     * @throws FilterFormatException if the input is shorter than 8 bytes, its magic is wrong or the
     *     normalization id unknown
     */
    static Normalization readNormalization(InputStream in) throws IOException {
        byte[] head = in.readNBytes(8);
        if (head.length < 8) {
            throw new FilterFormatException("length", "not a filter: " + head.length + " bytes");
        }
        checkMagic(java.nio.ByteBuffer.wrap(head, 0, 4).getInt());
        int id = head[7] & 0xFF;
        try {
            return id == 0 ? null : Normalization.fromId(id);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("normalization", e.getMessage());
        }
    }

    /**
     * Decodes a page written by {@link #encodePage}.
     *
     * @throws FilterFormatException if the bytes are not a valid page
     */
    static FilterCodec.Page decodePage(byte[] bytes, Hasher keyedHasher)
            throws FilterFormatException {
        try {
            int crc32c = checkChecksumFirst(bytes);
            BoundedInput r =
                    new BoundedInput(new ByteArrayInputStream(bytes), bytes.length, crc32c);
            FilterHeader h = FilterHeader.read(r, keyedHasher);
            if (h.type != TYPE_BLOOM_PAGE && h.type != TYPE_COUNTING_PAGE) {
                throw new FilterFormatException("type", "not a page: type " + h.type);
            }
            FilterSpec spec = h.spec();
            long index = h.itemsAdded;
            if (index < 0 || index >= spec.pages()) {
                throw new FilterFormatException(
                        "itemsAdded", "page index " + index + " outside [0, " + spec.pages() + ")");
            }
            boolean counting = h.type == TYPE_COUNTING_PAGE;
            int n = spec.pageWords(cellBits(counting));
            r.require(8L * n, "body");
            long[] words = new long[n];
            for (int i = 0; i < n; i++) {
                words[i] = r.readLong();
            }
            r.finish();
            return new FilterCodec.Page(spec, counting, index, words);
        } catch (FilterFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new FilterFormatException("length", "unreadable input: " + e);
        }
    }

    /**
     * Reads a dense or sparse body. A dense body holds every word, so the words it allocates are at
     * most its own bytes; a sparse body's pages go through {@link PagedWords#orBlock}, which holds
     * pages far apart on their own, so its allocation follows the pages in the input, not the
     * declared size of the filter.
     */
    private static PagedWords readBody(BoundedInput r, FilterSpec spec, int bitsPerCell)
            throws IOException {
        long totalWords = spec.words(bitsPerCell);
        int pageWords = spec.pageWords(bitsPerCell);
        int encoding = r.readUnsignedByte();
        if (encoding == DENSE) {
            r.require(totalWords * 8, "bits");
            PagedWords words = PagedWords.forSpec(spec, bitsPerCell);
            for (long i = 0; i < totalWords; i++) {
                long w = r.readLong();
                if (w != 0) {
                    words.set(i, w);
                }
            }
            return words;
        }
        if (encoding != SPARSE || spec.pages() < 2) {
            throw new FilterFormatException("body", "unknown encoding " + encoding);
        }
        int count = r.readInt();
        if (count < 0 || count > spec.pages()) {
            throw new FilterFormatException("body", "page count " + count + " out of range");
        }
        r.require(count * (4 + 8L * pageWords), "body");
        PagedWords words = PagedWords.forSpec(spec, bitsPerCell);
        long[] page = count == 0 ? null : new long[pageWords];
        long previous = -1;
        for (int n = 0; n < count; n++) {
            long index = r.readInt() & 0xFFFFFFFFL;
            if (index <= previous || index >= spec.pages()) {
                throw new FilterFormatException(
                        "body", "page index " + index + " out of order or range");
            }
            previous = index;
            for (int i = 0; i < pageWords; i++) {
                page[i] = r.readLong();
            }
            words.orBlock(index, page, 0);
        }
        return words;
    }

    /** Bits past m in the last word must be zero, or the filter was not written by us. */
    private static void checkUnusedBits(PagedWords words, long cells, int bitsPerCell)
            throws FilterFormatException {
        long usedBits = cells * bitsPerCell;
        int tail = (int) (usedBits & 63);
        if (tail != 0 && (words.get(words.words() - 1) >>> tail) != 0) {
            throw new FilterFormatException("bits", "bits set beyond m");
        }
    }

    private static ScalableBloomFilter readScalable(BoundedInput r, FilterHeader h)
            throws IOException {
        if (h.bits != 0 || h.hashes != 0) {
            throw new FilterFormatException("bits", "a scalable filter has bits = hashes = 0");
        }
        r.require(8 + 8 + 4 + 8 + 4, "body");
        long initialCapacity = r.readLong();
        double fpp = r.readDouble();
        int growth = r.readInt();
        double tightening = r.readDouble();
        int stageCount = r.readInt();
        if (stageCount < 0 || stageCount > ScalableBloomFilter.MAX_STAGES) {
            throw new FilterFormatException("body", "stage count " + stageCount + " out of range");
        }
        ScalableBloomFilter shape;
        try {
            shape =
                    ScalableBloomFilter.create(
                            initialCapacity, fpp, growth, tightening, h.pageBits, h.hasher);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("body", e.getMessage());
        }
        int cascadePageBits = h.pageBits;
        List<BloomFilter> stages = new ArrayList<>(stageCount);
        long total = 0;
        for (int i = 0; i < stageCount; i++) {
            r.require(8 + 4 + 4 + 8 + 1, "body");
            h.bits = r.readLong();
            h.hashes = r.readInt();
            h.pageBits = r.readInt();
            long itemsAdded = r.readLong();
            FilterSpec spec = h.spec();
            FilterSpec expected;
            try {
                expected = shape.stageSpec(i);
                spec.checkCompatible(expected);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new FilterFormatException("body", "stage " + i + ": " + e.getMessage());
            }
            if (itemsAdded < 0) {
                throw new FilterFormatException("itemsAdded", "stage " + i + ": negative");
            }
            PagedWords words = readBody(r, spec, 1);
            checkUnusedBits(words, spec.bits(), 1);
            stages.add(BloomFilter.restore(spec, words, itemsAdded));
            if (itemsAdded > Long.MAX_VALUE - total) {
                throw new FilterFormatException(
                        "itemsAdded", "stage " + i + ": the stages' items overflow a long");
            }
            total += itemsAdded;
        }
        if (total != h.itemsAdded) {
            throw new FilterFormatException(
                    "itemsAdded", "header says " + h.itemsAdded + ", stages sum to " + total);
        }
        return ScalableBloomFilter.restore(
                initialCapacity, fpp, growth, tightening, cascadePageBits, h.hasher, stages);
    }
}
