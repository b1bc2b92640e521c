package io.bloomstream.filter;

import static io.bloomstream.filter.FilterFormat.DENSE;
import static io.bloomstream.filter.FilterFormat.SPARSE;
import static io.bloomstream.filter.FilterFormat.TYPE_BLOOM;
import static io.bloomstream.filter.FilterFormat.TYPE_BLOOM_PAGE;
import static io.bloomstream.filter.FilterFormat.TYPE_COUNTING;
import static io.bloomstream.filter.FilterFormat.TYPE_COUNTING_PAGE;
import static io.bloomstream.filter.FilterFormat.TYPE_SCALABLE;
import static io.bloomstream.filter.FilterFormat.cellBits;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;
import java.util.zip.CheckedOutputStream;

/** Writes filters and pages in the format of {@link FilterFormat}, as they stream. */
final class FilterEncoder {

    private FilterEncoder() {}

    /**
     * Writes a filter to {@code out} (not closed) as it streams: no second copy of the filter is
     * made, so a filter of any size needs no more heap than itself.
     *
     * @param normalization how the entries were normalized, or null if not recorded
     */
    static void write(MembershipFilter filter, Normalization normalization, OutputStream out)
            throws IOException {
        Objects.requireNonNull(filter, "filter");
        int norm = normalization == null ? 0 : normalization.id();
        CRC32C crc = new CRC32C();
        DataOutputStream data = new DataOutputStream(new CheckedOutputStream(out, crc));
        if (filter instanceof BloomFilter) {
            BloomFilter f = (BloomFilter) filter;
            FilterHeader.write(data, TYPE_BLOOM, norm, f.spec(), f.itemsAdded());
            body(data, f.spec(), f.words(), f.pageWords());
        } else if (filter instanceof CountingBloomFilter) {
            CountingBloomFilter f = (CountingBloomFilter) filter;
            FilterHeader.write(data, TYPE_COUNTING, norm, f.spec(), f.itemsAdded());
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
    static byte[] encodePage(FilterSpec spec, boolean counting, long pageIndex, long[] words) {
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
            FilterHeader.write(
                    data, counting ? TYPE_COUNTING_PAGE : TYPE_BLOOM_PAGE, 0, spec, pageIndex);
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

    /**
     * Writes a dense or sparse body, whichever is smaller. Only the filter's non-empty pages are
     * visited (through {@link PagedWords#nextNonEmptyPage}), so a sparse filter of any declared
     * size is written in time proportional to its pages.
     */
    private static void body(DataOutputStream out, FilterSpec spec, PagedWords words, int pageWords)
            throws IOException {
        long pages = spec.pages();
        long nonEmpty = 0;
        if (pages > 1) {
            for (long p = words.nextNonEmptyPage(0, pageWords);
                    p >= 0;
                    p = words.nextNonEmptyPage(p + 1, pageWords)) {
                nonEmpty++;
            }
        }
        long denseBytes = words.words() * 8;
        long sparseBytes = 4 + nonEmpty * (4 + 8L * pageWords);
        if (pages > 1 && sparseBytes < denseBytes) {
            out.writeByte(SPARSE);
            out.writeInt((int) nonEmpty);
            for (long p = words.nextNonEmptyPage(0, pageWords);
                    p >= 0;
                    p = words.nextNonEmptyPage(p + 1, pageWords)) {
                long from = p * pageWords;
                out.writeInt((int) p);
                for (int i = 0; i < pageWords; i++) {
                    out.writeLong(words.get(from + i));
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
        FilterHeader.write(
                out, TYPE_SCALABLE, norm, f.hasher(), 0, 0, f.pageBits(), f.itemsAdded());
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
}
