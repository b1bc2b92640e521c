package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomstream.testing.FuzzBudget;
import io.bloomstream.testing.HostileFilters;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Fuzz tests of {@link FilterCodec}'s decoders (issue 20, item 7), by Jazzer: every input is
 * decoded or refused with {@link FilterFormatException}, within {@link #DECODE} (16 bytes per input
 * byte, as the format promises, plus the decoder's fixed objects) and two seconds of CPU; what
 * decodes is then used as the screen and the SQL functions use it (estimate, lookups, pages, union,
 * encoding) within {@link #USE}.
 *
 * <p>The default test run replays the committed corpus in {@code FilterCodecFuzzTestInputs/}; the
 * {@code fuzz} profile fuzzes (CONTRIBUTING.md, "Fuzzing the decoders").
 */
class FilterCodecFuzzTest {

    /** How long each target fuzzes under the {@code fuzz} profile. */
    static final String FUZZ_DURATION = FuzzBudget.DURATION;

    private static final FuzzBudget DECODE = new FuzzBudget(16, 32 * 1024);

    /**
     * A scalable filter's header also has its stages sized (FilterSpec's paged model for each page
     * size and k the sizing tries, whatever the parameters say): a fixed amount more.
     */
    private static final FuzzBudget DECODE_SCALABLE = new FuzzBudget(16, 1024 * 1024);

    /** The budget of decoding {@code bytes}, by the type its header names. */
    private static FuzzBudget decode(byte[] bytes) {
        return bytes.length > 5 && bytes[5] == 3 ? DECODE_SCALABLE : DECODE;
    }

    /** Using a filter allocates about as much again as decoding it, and encodes it once. */
    private static final FuzzBudget USE = new FuzzBudget(64, 64 * 1024);

    /** A cascade's rate and estimate model each of its stages: a fixed amount more. */
    private static final FuzzBudget USE_SCALABLE = new FuzzBudget(64, 1024 * 1024);

    private static final Hasher KEYED =
            Hasher.sipHash24(GoldenFilters.SIPHASH_K0, GoldenFilters.SIPHASH_K1);

    static {
        // Load and initialize every class on the way once, so that no input pays for it.
        warmUp(GoldenFilters.all().values().stream().map(FilterCodec::encode).toList());
        warmUp(List.of(HostileFilters.emptyWithMostPages()));
    }

    private static void warmUp(List<byte[]> inputs) {
        for (byte[] input : inputs) {
            try {
                FilterCodec.decodePage(input, null);
            } catch (FilterFormatException expected) {
                // loads the exception's class too
            }
            try {
                FilterCodec.readNormalization(new ByteArrayInputStream(input));
                MembershipFilter f = FilterCodec.decode(input, KEYED);
                FilterCodec.readFileStreaming(new ByteArrayInputStream(input), input.length, KEYED);
                f.estimate();
                f.expectedFpp();
                FilterReader.of(f).mightContain("x");
                if (f instanceof BloomFilter b) {
                    b.union(b.copy()).nextNonEmptyPage(0);
                    b.currentFpp();
                } else if (f instanceof CountingBloomFilter c) {
                    c.toBloomFilter();
                }
                FilterCodec.decode(FilterCodec.encode(f), f.hasher());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @FuzzTest(maxDuration = FUZZ_DURATION)
    void decodeWithAValidChecksum(byte[] data) {
        byte[] bytes = FuzzBudget.withValidChecksum(data);
        FilterFile file =
                decode(bytes)
                        .run(
                                "decodeFile",
                                bytes,
                                FilterFormatException.class,
                                () -> FilterCodec.decodeFile(bytes, null));
        if (file != null) {
            use(file.filter(), bytes);
        }
        MembershipFilter keyed =
                decode(bytes)
                        .run(
                                "decode (keyed)",
                                bytes,
                                FilterFormatException.class,
                                () -> FilterCodec.decode(bytes, KEYED));
        if (keyed != null) {
            use(keyed, bytes);
        }
        FilterCodec.Page page =
                DECODE.run(
                        "decodePage",
                        bytes,
                        FilterFormatException.class,
                        () -> FilterCodec.decodePage(bytes, null));
        if (page != null) {
            byte[] encoded =
                    FilterCodec.encodePage(
                            page.spec(), page.counting(), page.index(), page.words());
            try {
                FilterCodec.Page again = FilterCodec.decodePage(encoded, null);
                assertThat(again.index()).isEqualTo(page.index());
                assertThat(again.words()).isEqualTo(page.words());
            } catch (FilterFormatException e) {
                throw new AssertionError("re-encoded page does not decode", e);
            }
        }
    }

    /** As the screen reads a file: parsed as it streams, the checksum checked at the end. */
    @FuzzTest(maxDuration = FUZZ_DURATION)
    void decodeAsItStreams(byte[] data) {
        FilterFile file =
                decode(data)
                        .run(
                                "readFileStreaming",
                                data,
                                FilterFormatException.class,
                                () ->
                                        FilterCodec.readFileStreaming(
                                                new ByteArrayInputStream(data), data.length, null));
        if (file != null) {
            use(file.filter(), data);
        }
        DECODE.run(
                "readNormalization",
                data,
                FilterFormatException.class,
                () -> FilterCodec.readNormalization(new ByteArrayInputStream(data)));
    }

    /** Everything the library does with a filter read from outside, within {@link #USE}. */
    private static void use(MembershipFilter f, byte[] input) {
        byte[] encoded =
                (f instanceof ScalableBloomFilter ? USE_SCALABLE : USE)
                        .run(
                                "using " + f,
                                input,
                                null,
                                () -> {
                                    f.estimate();
                                    f.expectedFpp();
                                    f.itemsAdded();
                                    FilterReader reader = FilterReader.of(f);
                                    for (long i = 0; i < 16; i++) {
                                        reader.mightContain(f.hasher().hash(i).h1(), i);
                                    }
                                    if (f instanceof BloomFilter b) {
                                        b.nonEmptyPages();
                                        b.currentFpp();
                                        long[] page = new long[Pages.words(b.spec())];
                                        for (long p = b.nextNonEmptyPage(0);
                                                p >= 0;
                                                p = b.nextNonEmptyPage(p + 1)) {
                                            b.readPage(p, page);
                                        }
                                        b.union(b.copy()).estimate();
                                    } else if (f instanceof CountingBloomFilter c) {
                                        c.saturatedCounters();
                                        c.toBloomFilter().nonEmptyPages();
                                    }
                                    return FilterCodec.encode(f);
                                });
        // What the library writes reads back as itself.
        try {
            MembershipFilter again = FilterCodec.decode(encoded, f.hasher());
            assertThat(FilterCodec.encode(again)).isEqualTo(encoded);
            assertThat(again.itemsAdded()).isEqualTo(f.itemsAdded());
        } catch (FilterFormatException e) {
            throw new AssertionError("re-encoded filter does not decode", e);
        }
    }

    /** Writes the seed corpus: the golden files and hostile shapes (run by hand, once). */
    public static void main(String[] args) throws IOException {
        Path dir =
                Path.of(
                        args.length > 0
                                ? args[0]
                                : "operators/src/test/resources/io/bloomstream/filter/"
                                        + "FilterCodecFuzzTestInputs");
        for (String target : List.of("decodeWithAValidChecksum", "decodeAsItStreams")) {
            Path t = dir.resolve(target);
            Files.createDirectories(t);
            for (var e : GoldenFilters.all().entrySet()) {
                Files.write(t.resolve("seed-" + e.getKey()), FilterCodec.encode(e.getValue()));
            }
            Files.write(t.resolve("seed-empty-most-pages"), HostileFilters.emptyWithMostPages());
            Files.write(
                    t.resolve("seed-counting-empty-most-pages"),
                    HostileFilters.sparse(
                            HostileFilters.COUNTING, 64L * Integer.MAX_VALUE, 64, new long[0], 0));
            Files.write(
                    t.resolve("seed-few-pages-far-apart"),
                    HostileFilters.sparse(
                            HostileFilters.BLOOM,
                            64L * Integer.MAX_VALUE,
                            64,
                            new long[] {0, 1L << 20, 1L << 30, Integer.MAX_VALUE - 1},
                            4));
        }
    }
}
