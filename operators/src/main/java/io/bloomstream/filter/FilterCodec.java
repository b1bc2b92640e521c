package io.bloomstream.filter;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

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
 * count (4), then each stage as bits (8), hashes (4), itemsAdded (8) and a bloom body. Body of a
 * page: its words.
 *
 * <p>Decoding checks the magic and the CRC32C before it interprets any other field (inputs of 2 GiB
 * and more, parsed as they stream, check the CRC at the end), checks every field before it
 * allocates anything, and never allocates more than the declared input length can hold; any defect
 * raises {@link FilterFormatException}. The format version and type ids never change meaning; a
 * test locks them with golden files.
 */
public final class FilterCodec {

    static final int MAGIC = 0x424C4F4D;
    static final int VERSION = 1;
    static final int TYPE_BLOOM = 1;
    static final int TYPE_COUNTING = 2;
    static final int TYPE_SCALABLE = 3;
    static final int TYPE_BLOOM_PAGE = 4;
    static final int TYPE_COUNTING_PAGE = 5;
    static final int HEADER_BYTES = 40;
    static final int TRAILER_BYTES = 4;

    private static final int DENSE = 0;
    private static final int SPARSE = 1;

    private FilterCodec() {}

    // ------------------------------------------------------------------ encoding

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
        Objects.requireNonNull(filter, "filter");
        int norm = normalization == null ? 0 : normalization.id();
        CRC32C crc = new CRC32C();
        DataOutputStream data = new DataOutputStream(new CheckedOutputStream(out, crc));
        if (filter instanceof BloomFilter) {
            BloomFilter f = (BloomFilter) filter;
            header(data, TYPE_BLOOM, norm, f.spec(), f.itemsAdded());
            body(data, f.spec(), f.words(), f.pageWords());
        } else if (filter instanceof CountingBloomFilter) {
            CountingBloomFilter f = (CountingBloomFilter) filter;
            header(data, TYPE_COUNTING, norm, f.spec(), f.itemsAdded());
            body(
                    data,
                    f.spec(),
                    f.words(),
                    f.spec().pageWords(CountingBloomFilter.BITS_PER_COUNTER));
        } else if (filter instanceof ScalableBloomFilter) {
            writeScalable(data, norm, (ScalableBloomFilter) filter);
        } else {
            throw new IllegalArgumentException(
                    "no binary format for " + filter.getClass().getName());
        }
        data.flush();
        new DataOutputStream(out).writeInt((int) crc.getValue());
    }

    /**
     * Encodes one page of a filter (for state, deltas and transfers): its spec, index and words.
     *
     * @param counting whether the words are 4-bit counters
     */
    public static byte[] encodePage(
            FilterSpec spec, boolean counting, long pageIndex, long[] words) {
        if (pageIndex < 0 || pageIndex >= spec.pages()) {
            throw new IllegalArgumentException(
                    "pageIndex must be in [0, " + spec.pages() + "), was " + pageIndex);
        }
        int expected = spec.pageWords(cellBits(counting));
        if (words.length != expected) {
            throw new IllegalArgumentException(
                    "words.length must be " + expected + ", was " + words.length);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CRC32C crc = new CRC32C();
        try {
            DataOutputStream data = new DataOutputStream(new CheckedOutputStream(bytes, crc));
            header(data, counting ? TYPE_COUNTING_PAGE : TYPE_BLOOM_PAGE, 0, spec, pageIndex);
            for (long w : words) {
                data.writeLong(w);
            }
            data.flush();
            new DataOutputStream(bytes).writeInt((int) crc.getValue());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static void header(
            DataOutputStream out, int type, int normalization, FilterSpec spec, long itemsAdded)
            throws IOException {
        header(
                out,
                type,
                normalization,
                spec.hasher(),
                spec.bits(),
                spec.hashes(),
                spec.pageBits(),
                itemsAdded);
    }

    private static void header(
            DataOutputStream out,
            int type,
            int normalization,
            Hasher hasher,
            long bits,
            int hashes,
            int pageBits,
            long itemsAdded)
            throws IOException {
        out.writeInt(MAGIC);
        out.writeByte(VERSION);
        out.writeByte(type);
        out.writeByte(hasher.strategy().id());
        out.writeByte(normalization);
        out.writeLong(hasher.seed());
        out.writeLong(bits);
        out.writeInt(hashes);
        out.writeInt(pageBits);
        out.writeLong(itemsAdded);
    }

    private static void body(DataOutputStream out, FilterSpec spec, PagedWords words, int pageWords)
            throws IOException {
        long pages = spec.pages();
        long nonEmpty = 0;
        if (pages > 1) {
            for (long p = 0; p < pages; p++) {
                if (!words.isZero(p * pageWords, pageWords)) {
                    nonEmpty++;
                }
            }
        }
        long denseBytes = words.words() * 8;
        long sparseBytes = 4 + nonEmpty * (4 + 8L * pageWords);
        if (pages > 1 && sparseBytes < denseBytes) {
            out.writeByte(SPARSE);
            out.writeInt((int) nonEmpty);
            for (long p = 0; p < pages; p++) {
                long from = p * pageWords;
                if (!words.isZero(from, pageWords)) {
                    out.writeInt((int) p);
                    for (int i = 0; i < pageWords; i++) {
                        out.writeLong(words.get(from + i));
                    }
                }
            }
        } else {
            out.writeByte(DENSE);
            for (long i = 0; i < words.words(); i++) {
                out.writeLong(words.get(i));
            }
        }
    }

    private static void writeScalable(DataOutputStream out, int norm, ScalableBloomFilter f)
            throws IOException {
        header(out, TYPE_SCALABLE, norm, f.hasher(), 0, 0, f.pageBits(), f.itemsAdded());
        out.writeLong(f.initialCapacity());
        out.writeDouble(f.fpp());
        out.writeInt(f.growth());
        out.writeDouble(f.tightening());
        List<BloomFilter> stages = f.stages();
        out.writeInt(stages.size());
        for (BloomFilter s : stages) {
            out.writeLong(s.spec().bits());
            out.writeInt(s.spec().hashes());
            out.writeInt(s.spec().pageBits());
            out.writeLong(s.itemsAdded());
            body(out, s.spec(), s.words(), s.pageWords());
        }
    }

    private static int cellBits(boolean counting) {
        return counting ? CountingBloomFilter.BITS_PER_COUNTER : 1;
    }

    // ------------------------------------------------------------------ decoding

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
    private static int checkChecksumFirst(byte[] bytes) throws FilterFormatException {
        if (bytes.length < HEADER_BYTES + TRAILER_BYTES) {
            throw new FilterFormatException(
                    "length",
                    "needs at least "
                            + (HEADER_BYTES + TRAILER_BYTES)
                            + " bytes, has "
                            + bytes.length
                            + ": truncated or not a filter");
        }
        int magic = java.nio.ByteBuffer.wrap(bytes, 0, 4).getInt();
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    "magic", String.format("expected 0x%08X, found 0x%08X", MAGIC, magic));
        }
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

    /**
     * Reads one filter of exactly {@code length} bytes from {@code in} (not closed) as the bytes
     * stream, without a copy of the input: the heap it takes is the filter's own. The CRC32C is
     * checked at the end, so a corrupt field may be interpreted before the checksum fails; it is
     * still checked before it drives an allocation, and no allocation exceeds what {@code length}
     * can hold. The format is that of {@link #readFile}.
     *
     * @throws FilterFormatException if the bytes are not a valid filter
     * @throws IOException if reading fails
     */
    public static FilterFile readFileStreaming(InputStream in, long length, Hasher keyedHasher)
            throws IOException {
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
        try {
            return parse(new FormatReader(in, length, verifiedCrc), keyedHasher);
        } catch (EOFException e) {
            throw new FilterFormatException("length", "unexpected end of input");
        }
    }

    private static FilterFile parse(FormatReader r, Hasher keyedHasher) throws IOException {
        Header h = readHeader(r, keyedHasher);
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
    public static Normalization readNormalization(InputStream in) throws IOException {
        byte[] head = in.readNBytes(8);
        if (head.length < 8) {
            throw new FilterFormatException("length", "not a filter: " + head.length + " bytes");
        }
        int magic = java.nio.ByteBuffer.wrap(head, 0, 4).getInt();
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    "magic", String.format("expected 0x%08X, found 0x%08X", MAGIC, magic));
        }
        int id = head[7] & 0xFF;
        try {
            return id == 0 ? null : Normalization.fromId(id);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("normalization", e.getMessage());
        }
    }

    /** A decoded page: its filter's spec, whether it holds counters, its index and words. */
    public record Page(FilterSpec spec, boolean counting, long index, long[] words) {}

    /**
     * Decodes a page written by {@link #encodePage}.
     *
     * @throws FilterFormatException if the bytes are not a valid page
     */
    public static Page decodePage(byte[] bytes, Hasher keyedHasher) throws FilterFormatException {
        try {
            int crc32c = checkChecksumFirst(bytes);
            FormatReader r =
                    new FormatReader(new ByteArrayInputStream(bytes), bytes.length, crc32c);
            Header h = readHeader(r, keyedHasher);
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
            return new Page(spec, counting, index, words);
        } catch (FilterFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new FilterFormatException("length", "unreadable input: " + e);
        }
    }

    private static final class Header {
        int type;
        Hasher hasher;
        long bits;
        int hashes;
        int pageBits;
        long itemsAdded;
        Normalization normalization;

        FilterSpec spec() throws FilterFormatException {
            if (bits < 1 || bits > Sizing.MAX_BITS) {
                throw new FilterFormatException("bits", "out of range: " + bits);
            }
            if (hashes < 1 || hashes > Sizing.MAX_HASHES) {
                throw new FilterFormatException("hashes", "out of range: " + hashes);
            }
            try {
                return FilterSpec.of(bits, hashes, pageBits, hasher);
            } catch (IllegalArgumentException e) {
                throw new FilterFormatException("pageBits", e.getMessage());
            }
        }
    }

    private static Header readHeader(FormatReader r, Hasher keyedHasher) throws IOException {
        r.require(HEADER_BYTES, "length");
        int magic = r.readInt();
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    "magic", String.format("expected 0x%08X, found 0x%08X", MAGIC, magic));
        }
        int version = r.readUnsignedByte();
        if (version != VERSION) {
            throw new FilterFormatException(
                    "version", "unsupported format version " + version + " (this reads 1)");
        }
        Header h = new Header();
        h.type = r.readUnsignedByte();
        if (h.type < TYPE_BLOOM || h.type > TYPE_COUNTING_PAGE) {
            throw new FilterFormatException("type", "unknown filter type " + h.type);
        }
        int strategyId = r.readUnsignedByte();
        HashStrategy strategy;
        try {
            strategy = HashStrategy.fromId(strategyId);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("strategy", "unknown hash strategy id " + strategyId);
        }
        int normalization = r.readUnsignedByte();
        if (normalization != 0) {
            try {
                h.normalization = Normalization.fromId(normalization);
            } catch (IllegalArgumentException e) {
                throw new FilterFormatException("normalization", e.getMessage());
            }
        }
        long seed = r.readLong();
        if (strategy.isKeyed()) {
            if (keyedHasher == null || keyedHasher.strategy() != strategy) {
                throw new FilterFormatException(
                        "strategy", strategy + " is keyed: decode with its keyed Hasher");
            }
            if (keyedHasher.seed() != seed) {
                throw new FilterFormatException(
                        "seed", "the key check value does not match: wrong key");
            }
            h.hasher = keyedHasher;
        } else {
            h.hasher = Hasher.forUnkeyed(strategy, seed);
        }
        h.bits = r.readLong();
        h.hashes = r.readInt();
        h.pageBits = r.readInt();
        h.itemsAdded = r.readLong();
        if (h.itemsAdded < 0) {
            throw new FilterFormatException("itemsAdded", "negative: " + h.itemsAdded);
        }
        return h;
    }

    private static PagedWords readBody(FormatReader r, FilterSpec spec, int bitsPerCell)
            throws IOException {
        long totalWords = spec.words(bitsPerCell);
        int pageWords = spec.pageWords(bitsPerCell);
        int encoding = r.readUnsignedByte();
        if (encoding == DENSE) {
            r.require(totalWords * 8, "bits");
            PagedWords words = new PagedWords(totalWords);
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
        PagedWords words = new PagedWords(totalWords);
        long previous = -1;
        for (int n = 0; n < count; n++) {
            long page = r.readInt() & 0xFFFFFFFFL;
            if (page <= previous || page >= spec.pages()) {
                throw new FilterFormatException(
                        "body", "page index " + page + " out of order or range");
            }
            previous = page;
            for (int i = 0; i < pageWords; i++) {
                words.set(page * pageWords + i, r.readLong());
            }
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

    private static ScalableBloomFilter readScalable(FormatReader r, Header h) throws IOException {
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
            total += itemsAdded;
        }
        if (total != h.itemsAdded) {
            throw new FilterFormatException(
                    "itemsAdded", "header says " + h.itemsAdded + ", stages sum to " + total);
        }
        return ScalableBloomFilter.restore(
                initialCapacity, fpp, growth, tightening, cascadePageBits, h.hasher, stages);
    }

    /**
     * Reads big-endian fields, tracks what is left of the declared length, and checks the CRC at
     * the end unless it was verified before parsing.
     */
    private static final class FormatReader {
        private final InputStream raw;
        private final CRC32C crc; // null when the checksum was verified up front
        private final Integer verifiedCrc;
        private final DataInputStream data;
        private long remaining; // bytes left before the trailer

        FormatReader(InputStream in, long length, Integer verifiedCrc) {
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
         * Checks that nothing is left but the trailer, and that the trailer matches; returns it.
         */
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
                throw new FilterFormatException(
                        "crc32c",
                        String.format(
                                "checksum mismatch (stored %08x, computed %08x): the data is"
                                        + " corrupt",
                                found, expected));
            }
            return found;
        }
    }
}
