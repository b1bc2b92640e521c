package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.table.internal.SqlArguments;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link MightContainScalarFunction} and {@link EstimateScalarFunction} called directly.
 */
class BloomScalarsTest {

    private static byte[] filterOf(int n) {
        BloomFilter f = BloomFilter.create(SqlArguments.spec("t", 1_000, 0.01));
        for (int i = 0; i < n; i++) {
            f.add("id-" + i);
        }
        return FilterCodec.encode(f);
    }

    @Test
    void mightContainBytesHasNoFalseNegativesAndNullGivesNull() {
        MightContainScalarFunction m = new MightContainScalarFunction();
        byte[] filter = filterOf(1_000);
        for (int i = 0; i < 1_000; i++) {
            assertThat(m.eval(filter.clone(), "id-" + i)).isTrue();
        }
        assertThat(m.eval(null, "id-1")).isNull();
        assertThat(m.eval(filter, null)).isNull();
        // 10,000 absent values at the expected rate 1%: a 4.5-sigma binomial bound is 100 + 45
        int fp = 0;
        for (int i = 0; i < 10_000; i++) {
            fp += m.eval(filter, "absent-" + i) ? 1 : 0;
        }
        assertThat(fp).isLessThanOrEqualTo(145);
        m.close();
    }

    @Test
    void estimateReadsTheBits() {
        EstimateScalarFunction e = new EstimateScalarFunction();
        byte[] bytes = filterOf(800);
        double estimate = e.eval(bytes);
        BloomFilter f = (BloomFilter) decode(bytes);
        assertThat(estimate).isEqualTo(f.estimate().estimate());
        assertThat(Math.abs(estimate - 800)).isLessThanOrEqualTo(3 * f.estimate().standardError());
        assertThat(e.eval(null)).isNull();
        assertThat(e.eval(filterOf(0))).isZero();
    }

    private static Object decode(byte[] bytes) {
        try {
            return FilterCodec.decode(bytes);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void badBytesAreAnErrorNamingTheProblem() {
        EstimateScalarFunction e = new EstimateScalarFunction();
        MightContainScalarFunction m = new MightContainScalarFunction();
        byte[] good = filterOf(10);
        byte[] truncated = Arrays.copyOf(good, 20);
        byte[] flipped = good.clone();
        flipped[45] ^= 0x10;
        byte[] magic = good.clone();
        magic[0] = 'X';
        assertThatThrownBy(() -> e.eval(truncated))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("BLOOM_ESTIMATE: argument 'filter' is not a valid filter")
                .hasMessageContaining("length");
        assertThatThrownBy(() -> m.eval(flipped, "x"))
                .hasMessageContaining("BLOOM_MIGHT_CONTAIN: argument 'filter'")
                .hasMessageContaining("crc32c");
        assertThatThrownBy(() -> e.eval(magic)).hasMessageContaining("magic");
    }

    @Test
    void fileFilterIsNormalizedAsItRecordsAndLoadedOnce(@TempDir Path tmp) throws Exception {
        BloomFilter f = BloomFilter.create(1_000, 0.01);
        f.add(Normalization.EMAIL.apply("Alert@Prize-Loan.shop"));
        Path file = tmp.resolve("list.bloom");
        try (OutputStream out = Files.newOutputStream(file)) {
            FilterCodec.write(f, Normalization.EMAIL, out);
        }
        MightContainScalarFunction m = new MightContainScalarFunction();
        String path = file.toUri().toString();
        assertThat(m.eval(path, "\"Someone\" <ALERT@prize-loan.shop>")).isTrue();
        assertThat(m.eval(path, "other@prize-loan.shop")).isFalse();
        assertThat(m.eval(path, "not an address")).isFalse(); // unusable under email: never added
        Files.delete(file); // loaded once: still answers
        assertThat(m.eval(path, "alert@prize-loan.shop")).isTrue();
        m.close();
    }

    @Test
    void badFilesAreAnErrorNamingFileAndProblem(@TempDir Path tmp) throws Exception {
        MightContainScalarFunction m = new MightContainScalarFunction();
        Path missing = tmp.resolve("missing.bloom");
        assertThatThrownBy(() -> m.eval(missing.toString(), "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("BLOOM_MIGHT_CONTAIN: cannot use filter file " + missing)
                .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> m.eval(tmp.toString(), "x"))
                .hasMessageContaining("is a directory");
        byte[] bytes = filterOf(10);
        bytes[50] ^= 1;
        Path corrupt = Files.write(tmp.resolve("corrupt.bloom"), bytes);
        assertThatThrownBy(() -> m.eval(corrupt.toString(), "x"))
                .hasMessageContaining(corrupt.toString())
                .hasMessageContaining("crc32c");
        Path text = Files.writeString(tmp.resolve("list.txt"), "a\nb\n");
        assertThatThrownBy(() -> m.eval(text.toString(), "x"))
                .hasMessageContaining("not a filter file");
        m.close();
    }
}
