package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests for {@link FilterCodec}: round trips and golden files that lock the format. */
class FilterCodecTest {

    static byte[] golden(String name) throws IOException {
        try (InputStream in = FilterCodecTest.class.getResourceAsStream("/golden/" + name)) {
            assertThat(in).as("golden file %s", name).isNotNull();
            return in.readAllBytes();
        }
    }

    static Hasher keyFor(String name) {
        return name.contains("siphash")
                ? Hasher.sipHash24(GoldenFilters.SIPHASH_K0, GoldenFilters.SIPHASH_K1)
                : null;
    }

    @Test
    void encodingMatchesTheGoldenFilesByteForByte() throws IOException {
        for (Map.Entry<String, MembershipFilter> e : GoldenFilters.all().entrySet()) {
            assertThat(FilterCodec.encode(e.getValue()))
                    .as(
                            "format of %s changed: bump the format version, never the golden file",
                            e.getKey())
                    .isEqualTo(golden(e.getKey()));
        }
    }

    @Test
    void goldenFilesDecodeToFiltersThatHoldTheirItems() throws IOException {
        for (String name : GoldenFilters.all().keySet()) {
            MembershipFilter f = FilterCodec.decode(golden(name), keyFor(name));
            int n = name.startsWith("bloom-sparse") ? 10 : 200;
            int firstPresent = name.startsWith("counting") ? 50 : 0; // 0..49 were removed
            for (int i = firstPresent; i < n; i++) {
                assertThat(f.mightContain(GoldenFilters.item(i)))
                        .as("%s item %d", name, i)
                        .isTrue();
            }
        }
    }

    @Test
    void goldenFilesStreamToTheSameFiltersAndChecksumsAsFromBytes() throws IOException {
        for (String name : GoldenFilters.all().keySet()) {
            byte[] bytes = golden(name);
            FilterFile fromBytes = FilterCodec.decodeFile(bytes, keyFor(name));
            FilterFile streamed =
                    FilterCodec.readFileStreaming(
                            new java.io.ByteArrayInputStream(bytes), bytes.length, keyFor(name));
            assertThat(FilterCodec.encode(streamed.filter(), streamed.normalization()))
                    .as(name)
                    .isEqualTo(FilterCodec.encode(fromBytes.filter(), fromBytes.normalization()));
            int trailer = java.nio.ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
            assertThat(streamed.crc32c()).as(name).isEqualTo(trailer);
            assertThat(fromBytes.crc32c()).as(name).isEqualTo(trailer);
            FilterReader reader = FilterReader.of(streamed.filter());
            int n = name.startsWith("bloom-sparse") ? 10 : 200;
            int firstPresent = name.startsWith("counting") ? 50 : 0;
            for (int i = firstPresent; i < n; i++) {
                assertThat(reader.mightContain(GoldenFilters.item(i))).as(name).isTrue();
            }
        }
    }

    @Test
    void headerLayoutIsWhatTheJavadocSays() throws IOException {
        byte[] b = golden("bloom-classic-v1.bin");
        assertThat(new String(b, 0, 4, java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo("BLOM");
        assertThat(b[4]).isEqualTo((byte) 1); // version
        assertThat(b[5]).isEqualTo((byte) 1); // type bloom
        assertThat(b[6]).isEqualTo((byte) 1); // XXH3_128
        assertThat(java.nio.ByteBuffer.wrap(b, 8, 8).getLong()).isEqualTo(42L); // seed
        assertThat(java.nio.ByteBuffer.wrap(b, 28, 4).getInt()).isZero(); // classic
    }

    @Test
    void roundTripsPreserveEverything() throws IOException {
        for (Map.Entry<String, MembershipFilter> e : GoldenFilters.all().entrySet()) {
            byte[] bytes = FilterCodec.encode(e.getValue());
            MembershipFilter back = FilterCodec.decode(bytes, keyFor(e.getKey()));
            assertThat(back.getClass()).isEqualTo(e.getValue().getClass());
            assertThat(back.estimate()).isEqualTo(e.getValue().estimate());
            assertThat(FilterCodec.encode(back)).isEqualTo(bytes);
        }
    }

    @Test
    void sparseEncodingIsSmallForAFilterWithFewItems() {
        BloomFilter f = BloomFilter.create(1_000_000, 0.01);
        f.add("one");
        assertThat(FilterCodec.encode(f).length).isLessThan(200);
    }

    @Test
    void pageRoundTripsAndMatchesItsGoldenFile() throws IOException {
        FilterCodec.Page page = FilterCodec.decodePage(golden("page-v1.bin"), null);
        BloomFilter paged = (BloomFilter) GoldenFilters.all().get("bloom-paged-v1.bin");
        assertThat(page.spec()).isEqualTo(paged.spec());
        assertThat(page.counting()).isFalse();
        assertThat(FilterCodec.encodePage(page.spec(), false, page.index(), page.words()))
                .isEqualTo(golden("page-v1.bin"));
    }

    @Test
    void keyedFiltersNeedTheirKey() throws IOException {
        byte[] b = golden("bloom-siphash-v1.bin");
        assertThatThrownBy(() -> FilterCodec.decode(b))
                .isInstanceOf(FilterFormatException.class)
                .hasMessageContaining("keyed");
        assertThatThrownBy(() -> FilterCodec.decode(b, Hasher.sipHash24(1, 2)))
                .isInstanceOf(FilterFormatException.class)
                .extracting(e -> ((FilterFormatException) e).field())
                .isEqualTo("seed");
    }

    @Test
    void unknownTypesOfFilterAreRejected() {
        assertThatThrownBy(() -> FilterCodec.encode(new NotAFilter()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static final class NotAFilter implements MembershipFilter {
        @Override
        public Hasher hasher() {
            return Hasher.defaultHasher();
        }

        @Override
        public void add(long h1, long h2) {}

        @Override
        public long itemsAdded() {
            return 0;
        }

        @Override
        public double expectedFpp() {
            return 0;
        }

        @Override
        public boolean mightContain(long h1, long h2) {
            return false;
        }

        @Override
        public boolean addIfAbsent(long h1, long h2) {
            return false;
        }

        @Override
        public Estimate estimate() {
            return Estimate.of(0, FilterSpec.forItems(1, 0.5));
        }
    }

    @Test
    void normalizationIsRecordedInTheHeaderAndReadBack() throws IOException {
        for (Normalization n : Normalization.values()) {
            BloomFilter f = BloomFilter.create(1000, 0.01);
            f.add("a@example.com");
            byte[] bytes = FilterCodec.encode(f, n);
            assertThat(bytes[7]).isEqualTo((byte) n.id());
            FilterFile file = FilterCodec.decodeFile(bytes, null);
            assertThat(file.normalization()).isEqualTo(n);
            assertThat(file.filter().mightContain("a@example.com")).isTrue();
            assertThat(FilterCodec.readNormalization(new java.io.ByteArrayInputStream(bytes)))
                    .isEqualTo(n);
        }
        // Filters written without one record 0, read back as "not recorded".
        byte[] plain = FilterCodec.encode(BloomFilter.create(1000, 0.01));
        assertThat(plain[7]).isZero();
        assertThat(FilterCodec.decodeFile(plain, null).normalization()).isNull();
        assertThat(FilterCodec.readNormalization(new java.io.ByteArrayInputStream(plain))).isNull();
        assertThatThrownBy(
                        () ->
                                FilterCodec.readNormalization(
                                        new java.io.ByteArrayInputStream(new byte[] {1, 2, 3})))
                .isInstanceOf(FilterFormatException.class);
    }

    @Test
    void normalizationIdsNeverChange() {
        assertThat(Normalization.NONE.id()).isEqualTo(1);
        assertThat(Normalization.LOWERCASE.id()).isEqualTo(2);
        assertThat(Normalization.EMAIL.id()).isEqualTo(3);
        assertThat(Normalization.DOMAIN.id()).isEqualTo(4);
    }
}
