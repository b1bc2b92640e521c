package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFormatException;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.testing.FuzzBudget;
import io.bloomstream.testing.HostileFilters;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Fuzz tests of the SQL functions that take a filter as a BYTES value (issue 20, item 7), through
 * {@code FilterValues}: {@code BLOOM_ESTIMATE}, {@code BLOOM_MIGHT_CONTAIN} and {@code BLOOM_UNION}
 * answer, or refuse the value with an {@link IllegalArgumentException} naming the argument, within
 * the budget, and a union's result is always a valid Bloom filter.
 *
 * <p>The default test run replays the committed corpus in {@code SqlFilterValuesFuzzTestInputs/};
 * the {@code fuzz} profile fuzzes (CONTRIBUTING.md, "Fuzzing the decoders").
 */
class SqlFilterValuesFuzzTest {

    /** How long the target fuzzes under the {@code fuzz} profile. */
    static final String FUZZ_DURATION = FuzzBudget.DURATION;

    /** A scalar decodes the value once and keeps a copy of it as the cache's key. */
    private static final FuzzBudget SCALAR = new FuzzBudget(32, 64 * 1024);

    /**
     * A union keeps each non-empty page in its accumulator's map (an entry, a boxed key and an
     * array: a few hundred bytes for a page that may take 12 bytes of input), and encodes the
     * result.
     */
    private static final FuzzBudget UNION = new FuzzBudget(128, 128 * 1024);

    /**
     * A scalable filter's stages are sized as it is decoded (the paged model for each page size and
     * k the sizing tries): a fixed amount more, whatever the function.
     */
    private static final FuzzBudget SCALABLE = new FuzzBudget(32, 1024 * 1024);

    private static boolean scalable(byte[] bytes) {
        return bytes.length > 5 && bytes[5] == 3;
    }

    static {
        // Load and link what the functions meet, so that no input pays for it.
        for (byte[] seed :
                List.of(
                        FilterCodec.encode(BloomFilter.create(1_000, 0.01)),
                        HostileFilters.emptyWithMostPages(),
                        new byte[] {1, 2, 3})) {
            try {
                estimate(seed);
                mightContain(seed);
                union(seed);
            } catch (IllegalArgumentException expected) {
                // the refusal's path is linked too
            }
        }
    }

    private static Double estimate(byte[] bytes) {
        return new EstimateScalarFunction().eval(bytes);
    }

    private static Boolean mightContain(byte[] bytes) {
        MightContainScalarFunction f = new MightContainScalarFunction();
        f.eval(bytes, "x");
        f.eval(bytes, 42L);
        return f.eval(bytes, new byte[] {1});
    }

    private static byte[] union(byte[] bytes) {
        try {
            UnionAggFunction u = new UnionAggFunction();
            BloomAccumulator acc = u.createAccumulator();
            u.accumulate(acc, bytes);
            u.accumulate(acc, bytes);
            BloomAccumulator other = u.createAccumulator();
            u.accumulate(other, bytes);
            u.merge(acc, List.of(other));
            return u.getValue(acc);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError("BLOOM_UNION threw " + e, e);
        }
    }

    private static void namesTheArgument(Runnable call) {
        try {
            call.run();
        } catch (IllegalArgumentException e) {
            assertThat(e).hasMessageContaining("argument 'filter'");
        }
    }

    @FuzzTest(maxDuration = FUZZ_DURATION)
    void functionsAnswerOrRefuseTheArgument(byte[] data) {
        byte[] bytes = FuzzBudget.withValidChecksum(data);
        FuzzBudget scalar = scalable(bytes) ? SCALABLE : SCALAR;
        scalar.run("BLOOM_ESTIMATE", bytes, IllegalArgumentException.class, () -> estimate(bytes));
        scalar.run(
                "BLOOM_MIGHT_CONTAIN",
                bytes,
                IllegalArgumentException.class,
                () -> mightContain(bytes));
        byte[] union =
                (scalable(bytes) ? SCALABLE : UNION)
                        .run(
                                "BLOOM_UNION",
                                bytes,
                                IllegalArgumentException.class,
                                () -> union(bytes));
        namesTheArgument(() -> estimate(bytes));
        namesTheArgument(() -> union(bytes));
        if (union != null) {
            try {
                MembershipFilter f = FilterCodec.decode(union);
                assertThat(f).isInstanceOf(BloomFilter.class);
                assertThat(f.itemsAdded()).isNotNegative();
            } catch (FilterFormatException e) {
                throw new AssertionError("BLOOM_UNION wrote an invalid filter", e);
            }
        }
    }

    /** Writes the seed corpus (run by hand, once). */
    public static void main(String[] args) throws IOException {
        Path dir =
                Path.of(
                        args.length > 0
                                ? args[0]
                                : "operators/src/test/resources/io/bloomstream/table/"
                                        + "SqlFilterValuesFuzzTestInputs/"
                                        + "functionsAnswerOrRefuseTheArgument");
        Files.createDirectories(dir);
        BuildFilterAggFunction build = new BuildFilterAggFunction();
        BloomAccumulator acc = build.createAccumulator();
        for (long i = 0; i < 200; i++) {
            try {
                build.accumulate(acc, i, 100_000L, 0.01);
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
        Files.write(dir.resolve("seed-bloom-build"), build.getValue(acc));
        Files.write(dir.resolve("seed-empty-most-pages"), HostileFilters.emptyWithMostPages());
        Files.write(
                dir.resolve("seed-few-pages-far-apart"),
                HostileFilters.sparse(
                        HostileFilters.BLOOM,
                        64L * Integer.MAX_VALUE,
                        64,
                        new long[] {0, 1L << 20, 1L << 30, Integer.MAX_VALUE - 1},
                        Long.MAX_VALUE - 1));
    }
}
