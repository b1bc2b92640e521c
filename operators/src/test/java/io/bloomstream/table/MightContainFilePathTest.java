package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.screen.FaultyFileSystems;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link MightContainScalarFunction} given the path of a filter file (issue 29, item 7):
 * its files are cached by normalized path and bounded, and a file that cannot be used is named
 * without echoing its bytes or its size. (That the path must be a literal is checked at planning:
 * {@link BloomPlanningErrorsTest}.)
 */
class MightContainFilePathTest {

    @TempDir Path tmp;

    private Path filter(String name, String entry) throws IOException {
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder()
                                .expectedItems(100)
                                .fpp(0.01)
                                .hasher(Hasher.defaultHasher())
                                .build());
        f.add(entry);
        Path p = tmp.resolve(name);
        Files.write(p, FilterCodec.encode(f));
        return p;
    }

    private static String messages(Throwable t) {
        assertThat(t).isInstanceOf(IllegalArgumentException.class);
        StringBuilder s = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            s.append(c.getMessage()).append('\n');
        }
        return s.toString();
    }

    @Test
    void aBadFileIsNamedWithoutItsBytesOrSize() throws IOException {
        Path small = tmp.resolve("small.txt");
        Files.writeString(small, "TOPSECRET!", StandardCharsets.US_ASCII);
        byte[] text = new byte[100];
        Arrays.fill(text, (byte) 'z');
        System.arraycopy("ABCD".getBytes(StandardCharsets.US_ASCII), 0, text, 0, 4);
        Path other = tmp.resolve("other.txt");
        Files.write(other, text);
        MightContainScalarFunction f = new MightContainScalarFunction();
        for (Path p : new Path[] {small, other}) {
            String m = messages(catchThrowable(() -> f.eval(p.toString(), "x")));
            assertThat(m)
                    .contains("BLOOM_MIGHT_CONTAIN: cannot use filter file " + p)
                    .contains("not a filter file")
                    .doesNotContain("0x")
                    .doesNotContain("41424344")
                    .doesNotContain("bytes")
                    .doesNotContain("TOPSECRET");
        }
        f.close();
    }

    @Test
    void aKeyedFileIsRefusedWithSqlsReasonNotTheScreens() throws IOException {
        Hasher keyed = Hasher.sipHash24(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        BloomFilter b =
                BloomFilter.create(
                        FilterSpec.builder().expectedItems(100).fpp(0.01).hasher(keyed).build());
        b.add("listed");
        Path p = tmp.resolve("keyed.bloom");
        Files.write(p, FilterCodec.encode(b));
        MightContainScalarFunction f = new MightContainScalarFunction();
        assertThat(messages(catchThrowable(() -> f.eval(p.toString(), "listed"))))
                .contains("BLOOM_MIGHT_CONTAIN: cannot use filter file " + p)
                .contains("keyed (SipHash-2-4) filter file")
                .contains("SQL has no key")
                .doesNotContain("ScreenConfig")
                .doesNotContain("--key");
        f.close();
    }

    @Test
    void readErrorsNameNeitherTheSizeNorTheRawException() throws IOException {
        Path file = filter("f.bloom", "listed");
        long reported = Files.size(file) + FaultyFileSystems.SHORT_BY;
        MightContainScalarFunction f = new MightContainScalarFunction();
        String shorter = messages(catchThrowable(() -> f.eval("short://" + file, "listed")));
        assertThat(shorter)
                .contains("BLOOM_MIGHT_CONTAIN: cannot use filter file short://" + file)
                .contains("reading failed")
                .doesNotContain("Exception");
        // the random temporary path may hold any digits: look for the size outside it
        assertThat(shorter.replace(file.toString(), "")).doesNotContain(String.valueOf(reported));
        String denied = messages(catchThrowable(() -> f.eval("denied://" + file, "listed")));
        assertThat(denied)
                .contains("BLOOM_MIGHT_CONTAIN: cannot use filter file denied://" + file)
                .contains("permission denied")
                .doesNotContain("Exception");
        assertThat(denied.replace(file.toString(), "")).doesNotContain("403");
        f.close();
    }

    @Test
    void spellingsOfOneFileShareOneEntryAndDistinctFilesAreBounded() throws IOException {
        MightContainScalarFunction f = new MightContainScalarFunction();
        Path first = filter("f0.bloom", "listed");
        for (int i = 1; i < MightContainScalarFunction.MAX_FILES; i++) {
            assertThat(f.eval(filter("f" + i + ".bloom", "x").toString(), "listed")).isFalse();
        }
        // 300 spellings of the first file: one file, not 300 loads
        String dir = first.getParent().toString();
        for (int i = 0; i < 300; i++) {
            String spelling = dir + "/" + "./".repeat(i) + first.getFileName();
            if (i % 3 == 1) {
                spelling = "file://" + spelling;
            } else if (i % 3 == 2) {
                spelling = dir + "/" + "/".repeat(i) + first.getFileName();
            }
            assertThat(f.eval(spelling, "listed")).as(spelling).isTrue();
        }
        Path oneTooMany = filter("extra.bloom", "x");
        assertThat(messages(catchThrowable(() -> f.eval(oneTooMany.toString(), "x"))))
                .contains("BLOOM_MIGHT_CONTAIN")
                .contains("more than " + MightContainScalarFunction.MAX_FILES + " filter files");
        f.close();
    }
}
