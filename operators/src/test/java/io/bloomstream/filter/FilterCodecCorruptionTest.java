package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Truncated, corrupted and hostile inputs only ever raise {@link FilterFormatException}: never
 * another exception, never an out-of-memory allocation, never a wrong filter.
 */
class FilterCodecCorruptionTest {

    private static byte[][] samples() {
        return GoldenFilters.all().entrySet().stream()
                .filter(e -> !e.getKey().contains("siphash"))
                .map(e -> FilterCodec.encode(e.getValue()))
                .toArray(byte[][]::new);
    }

    private static void expectFormatError(byte[] input, String what) {
        try {
            FilterCodec.decode(input);
            fail("decoded a %s input of %d bytes", what, input.length);
        } catch (FilterFormatException expected) {
            assertThat(expected.field()).isNotBlank();
        } catch (RuntimeException | Error e) {
            throw new AssertionError(what + " input raised " + e, e);
        }
    }

    @Test
    void everyTruncationIsRejected() {
        int checked = 0;
        for (byte[] full : samples()) {
            int step = Math.max(1, full.length / 1500);
            for (int len = 0; len < full.length; len += (len < 64 ? 1 : step)) {
                expectFormatError(Arrays.copyOf(full, len), "truncated");
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(3000);
    }

    @Test
    void randomBitFlipsAreRejected() {
        SplittableRandom random = new SplittableRandom(2024);
        int checked = 0;
        for (byte[] full : samples()) {
            for (int i = 0; i < 1000; i++) {
                byte[] copy = full.clone();
                int flips = 1 + random.nextInt(3);
                for (int f = 0; f < flips; f++) {
                    int bit = random.nextInt(copy.length * 8);
                    copy[bit >>> 3] ^= (byte) (1 << (bit & 7));
                }
                // CRC32C detects every error of up to 3 bits in inputs this short (its Hamming
                // distance is at least 4 below 2^31 bits), so each flip must be caught.
                expectFormatError(copy, "bit-flipped");
                checked++;
            }
        }
        assertThat(checked).isEqualTo(1000 * samples().length);
    }

    @Test
    void streamingDecodeChecksTheChecksumAtTheEnd() throws Exception {
        byte[] good = FilterCodec.encode(GoldenFilters.all().get("bloom-paged-v1.bin"));
        MembershipFilter f =
                FilterDecoder.readStreaming(
                                new java.io.ByteArrayInputStream(good), good.length, null)
                        .filter();
        assertThat(f.mightContain(GoldenFilters.item(0))).isTrue();
        byte[] flipped = good.clone();
        flipped[good.length - 10] ^= 1; // a body bit: structure intact, checksum wrong
        assertThatThrownBy(
                        () ->
                                FilterDecoder.readStreaming(
                                        new java.io.ByteArrayInputStream(flipped),
                                        flipped.length,
                                        null))
                .isInstanceOf(FilterFormatException.class)
                .extracting(e -> ((FilterFormatException) e).field())
                .isEqualTo("crc32c");
        assertThatThrownBy(
                        () ->
                                FilterDecoder.readStreaming(
                                        new java.io.ByteArrayInputStream(good, 0, 30),
                                        good.length,
                                        null))
                .isInstanceOf(FilterFormatException.class)
                .extracting(e -> ((FilterFormatException) e).field())
                .isEqualTo("length");
    }

    /**
     * A corrupt file read as it streams (the screen's and {@code BLOOM_MIGHT_CONTAIN}'s path) is
     * reported as a checksum mismatch, not as the field the damage happened to hit ("hashes out of
     * range"), which would send a user looking for a writer's bug (issue 29, item 20).
     */
    @Test
    void streamingDecodeReportsAChecksumMismatchRatherThanTheFieldItHit() {
        int checked = 0;
        for (byte[] good : samples()) {
            // version, type, strategy, bits, hashes, pageBits, itemsAdded, the body's encoding
            for (int offset : new int[] {4, 5, 6, 16, 24, 28, 32, 40}) {
                byte[] bad = good.clone();
                bad[offset] ^= (byte) 0x7E;
                assertThatThrownBy(
                                () ->
                                        FilterDecoder.readStreaming(
                                                new java.io.ByteArrayInputStream(bad),
                                                bad.length,
                                                null))
                        .as("byte %d of a %d-byte file", offset, bad.length)
                        .isInstanceOf(FilterFormatException.class)
                        .extracting(e -> ((FilterFormatException) e).field())
                        .isEqualTo("crc32c");
                checked++;
            }
        }
        assertThat(checked).isEqualTo(8 * samples().length);
    }

    @Test
    void appendedGarbageIsRejected() {
        for (byte[] full : samples()) {
            byte[] longer = Arrays.copyOf(full, full.length + 8);
            expectFormatError(longer, "padded");
        }
    }

    @Test
    void hugeLengthFieldsAllocateNothing() {
        // A valid-looking header that declares 2^39 bits (64 GiB) in a 45-byte input.
        ByteBuffer b = ByteBuffer.allocate(45);
        b.putInt(FilterFormat.MAGIC).put((byte) 1).put((byte) 1).put((byte) 1).put((byte) 0);
        b.putLong(0).putLong(1L << 39).putInt(7).putInt(512).putLong(0).put((byte) 0);
        assertThatThrownBy(() -> FilterCodec.decode(withChecksum(b.array())))
                .isInstanceOf(FilterFormatException.class)
                .extracting(e -> ((FilterFormatException) e).field())
                .isEqualTo("bits");
    }

    @Test
    void guavaStyleSixByteHeaderIsRejected() {
        // The header that makes Guava's BloomFilter.readFrom throw OutOfMemoryError.
        byte[] six = {0x01, 0x01, 0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        expectFormatError(six, "six-byte");
    }

    @Test
    void eachHeaderFieldIsNamedInAWellFormedFileOfAnotherWriter() {
        // A bad field under a valid checksum, as a future version or another writer would
        // produce: the field is named. (Under a bad checksum the error is "crc32c".)
        byte[] good = FilterCodec.encode(GoldenFilters.all().get("bloom-classic-v1.bin"));
        assertField(good, 0, "magic");
        assertField(good, 4, "version");
        assertField(good, 5, "type");
        assertField(good, 6, "strategy");
        assertField(good, 7, "normalization");
    }

    @Test
    void hostileScalableParametersUnderAValidChecksumFailCleanly() {
        // initialCapacity 2^40, fpp 1 - 5e-10, tightening 5e-10: sizing must refuse, not
        // hang or run out of memory.
        ByteBuffer b = ByteBuffer.allocate(40 + 32 + 25 + 8 + 4);
        b.putInt(FilterFormat.MAGIC).put((byte) 1).put((byte) 3).put((byte) 1).put((byte) 0);
        b.putLong(Hasher.DEFAULT_SEED).putLong(0).putInt(0).putInt(-1).putLong(0);
        b.putLong(1L << 40).putDouble(1 - 5e-10).putInt(2).putDouble(5e-10).putInt(1);
        // one stage of 64 bits, 1 hash, classic, dense, one word: not what that cascade sizes
        b.putLong(64).putInt(1).putInt(0).putLong(0).put((byte) 0).putLong(0);
        assertThatThrownBy(() -> FilterCodec.decode(withChecksum(b.array())))
                .isInstanceOf(FilterFormatException.class);
    }

    private static byte[] withChecksum(byte[] bytes) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        return bytes;
    }

    private static void assertField(byte[] good, int offset, String field) {
        byte[] bad = good.clone();
        bad[offset] = (byte) 0x7E;
        assertThatThrownBy(() -> FilterCodec.decode(withChecksum(bad)))
                .isInstanceOf(FilterFormatException.class)
                .extracting(e -> ((FilterFormatException) e).field())
                .isEqualTo(field);
    }
}
