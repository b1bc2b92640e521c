package io.bloomstream.testing;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Filter files written byte by byte, as a hostile or careless writer would, under a valid CRC32C:
 * shapes the library's own encoder never writes but a decoder must survive (the layout is the one
 * of {@code io.bloomstream.filter.FilterFormat}).
 */
public final class HostileFilters {

    /** Type ids of the format. */
    public static final int BLOOM = 1;

    public static final int COUNTING = 2;

    private HostileFilters() {}

    /**
     * A Bloom or counting filter of {@code bits} cells in pages of {@code pageBits}, with a sparse
     * body holding {@code pages} (increasing page indexes), page i's words all equal to {@code
     * word(i)}; default hash (XXH3-128, default seed), no normalization, k = 1.
     */
    public static byte[] sparse(int type, long bits, int pageBits, long[] pages, long itemsAdded) {
        int pageWords = pageBits * (type == COUNTING ? 4 : 1) / 64;
        ByteBuffer b = ByteBuffer.allocate(40 + 1 + 4 + pages.length * (4 + 8 * pageWords) + 4);
        header(b, type, bits, 1, pageBits, itemsAdded);
        b.put((byte) 1).putInt(pages.length);
        for (long page : pages) {
            b.putInt((int) page);
            for (int i = 0; i < pageWords; i++) {
                b.putLong(word(page));
            }
        }
        return withChecksum(b.array());
    }

    /** The word every sparse page of {@link #sparse} holds: one bit, from the page index. */
    public static long word(long page) {
        return 1L << (page & 63);
    }

    /** Writes the 40-byte header. */
    public static void header(
            ByteBuffer b, int type, long bits, int hashes, int pageBits, long itemsAdded) {
        b.putInt(0x424C4F4D).put((byte) 1).put((byte) type).put((byte) 1).put((byte) 0);
        b.putLong(0x626c6f6f6d737472L).putLong(bits).putInt(hashes).putInt(pageBits);
        b.putLong(itemsAdded);
    }

    /** {@code bytes} with its last 4 bytes set to the CRC32C of the others. */
    public static byte[] withChecksum(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        return bytes;
    }

    /**
     * The 49-byte Bloom filter of issue 20: 64-bit pages, 2^31 - 1 of them (the most the format
     * allows), an empty sparse body.
     */
    public static byte[] emptyWithMostPages() {
        return sparse(BLOOM, 64L * Integer.MAX_VALUE, 64, new long[0], 0);
    }

    /**
     * Every 2^17th page over the most 64-bit pages the format allows: 16,384 pages, one in every 1
     * MiB of words, a 197 KB file for a Bloom filter (one word a page); a counting filter of that
     * shape (four words a page) is 590 KB. Before issue 20 each page cost the decoder a 1 MiB
     * chunk: 16 GiB.
     */
    public static byte[] pagesFarApart(int type) {
        long pageStride = 1L << 17;
        long declared = Integer.MAX_VALUE;
        long[] pages = new long[(int) (declared / pageStride) + 1];
        for (int i = 0; i < pages.length; i++) {
            pages[i] = i * pageStride;
        }
        return sparse(type, 64L * declared, 64, pages, pages.length);
    }
}
