package io.bloomstream.filter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The deterministic filters behind the golden files in {@code src/test/resources/golden}. Run
 * {@link #main} only on a deliberate format change (with a new format version), never to make a
 * failing golden test pass.
 */
final class GoldenFilters {

    static final long SIPHASH_K0 = 0x0706050403020100L;
    static final long SIPHASH_K1 = 0x0f0e0d0c0b0a0908L;

    private GoldenFilters() {}

    /** Items 0..n-1 as strings "golden-i". */
    static String item(int i) {
        return "golden-" + i;
    }

    static Map<String, MembershipFilter> all() {
        Map<String, MembershipFilter> filters = new LinkedHashMap<>();
        BloomFilter paged = BloomFilter.create(FilterSpec.forItems(1000, 0.01));
        fill(paged, 1000);
        filters.put("bloom-paged-v1.bin", paged);

        BloomFilter sparse =
                BloomFilter.create(FilterSpec.builder().expectedItems(100_000).fpp(0.01).build());
        fill(sparse, 10);
        filters.put("bloom-sparse-v1.bin", sparse);

        BloomFilter classic =
                BloomFilter.create(
                        FilterSpec.builder()
                                .expectedItems(500)
                                .fpp(0.001)
                                .pageBits(FilterSpec.CLASSIC)
                                .hasher(Hasher.xxh3(42))
                                .build());
        fill(classic, 500);
        filters.put("bloom-classic-v1.bin", classic);

        CountingBloomFilter counting =
                CountingBloomFilter.create(
                        FilterSpec.builder().bits(4096).hashes(5).pageBits(512).build());
        fill(counting, 300);
        for (int i = 0; i < 50; i++) {
            counting.remove(item(i));
        }
        filters.put("counting-v1.bin", counting);

        ScalableBloomFilter scalable = ScalableBloomFilter.create(100, 0.01);
        fill(scalable, 1000);
        filters.put("scalable-v1.bin", scalable);

        BloomFilter keyed =
                BloomFilter.create(
                        FilterSpec.builder()
                                .expectedItems(200)
                                .fpp(0.01)
                                .hasher(Hasher.sipHash24(SIPHASH_K0, SIPHASH_K1))
                                .build());
        fill(keyed, 200);
        filters.put("bloom-siphash-v1.bin", keyed);

        // create(n, p) from bloomstream 0.5 on: 512-bit pages, XXH3-64, storage allocated at once
        BloomFilter fast = BloomFilter.create(1000, 0.01);
        fill(fast, 1000);
        filters.put("bloom-default-v1.bin", fast);
        return filters;
    }

    static void fill(MembershipFilter f, int n) {
        for (int i = 0; i < n; i++) {
            f.add(item(i));
        }
    }

    /** Writes the golden files into the given directory (operators/src/test/resources/golden). */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "operators/src/test/resources/golden");
        Files.createDirectories(dir);
        for (Map.Entry<String, MembershipFilter> e : all().entrySet()) {
            Files.write(dir.resolve(e.getKey()), FilterCodec.encode(e.getValue()));
        }
        BloomFilter paged = (BloomFilter) all().get("bloom-paged-v1.bin");
        long[] words = new long[paged.pageWords()];
        long page = paged.spec().page(paged.hasher().hash(item(0)).h1());
        for (int i = 0; i < words.length; i++) {
            words[i] = paged.words().get(page * words.length + i);
        }
        Files.write(
                dir.resolve("page-v1.bin"),
                FilterCodec.encodePage(paged.spec(), false, page, words));
    }
}
