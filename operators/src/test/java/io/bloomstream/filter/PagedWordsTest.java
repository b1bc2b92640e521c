package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tests for {@link PagedWords}: its two tiers (chunks, and blocks held on their own) read and write
 * exactly as one flat array would, whatever mix of adds, bulk puts, unions and copies made them.
 */
class PagedWordsTest {

    /** Three whole chunks and a partial one. */
    private static final int WORDS = 3 * PagedWords.CHUNK_WORDS + 4096;

    private static final class Model {
        final long[] flat = new long[WORDS];
        final PagedWords words;

        Model(int blockWords) {
            words = new PagedWords(WORDS, blockWords);
        }
    }

    private static long randomWord(SplittableRandom r) {
        return r.nextInt(4) == 0 ? 0 : 1L << r.nextInt(64) | (r.nextBoolean() ? r.nextLong() : 0);
    }

    /** A random index, clustered in a few places so that chunks fill up and get promoted. */
    private static int randomIndex(SplittableRandom r) {
        return r.nextBoolean()
                ? r.nextInt(WORDS)
                : Math.min(WORDS - 1, PagedWords.CHUNK_WORDS + r.nextInt(1 << 16));
    }

    private static void step(Model m, SplittableRandom r) {
        int blockWords = m.words.blockWords();
        switch (r.nextInt(5)) {
            case 0 -> {
                int i = randomIndex(r);
                long w = randomWord(r);
                m.flat[i] = w;
                m.words.set(i, w);
            }
            case 1 -> {
                int i = randomIndex(r);
                int bit = r.nextInt(64);
                boolean clear = (m.flat[i] & (1L << bit)) == 0;
                m.flat[i] |= 1L << bit;
                assertThat(m.words.setBit(i, bit)).isEqualTo(clear);
            }
            default -> {
                int block = randomIndex(r) / blockWords;
                long[] src = new long[blockWords + 2];
                for (int i = 0; i < blockWords; i++) {
                    src[1 + i] = randomWord(r);
                    m.flat[block * blockWords + i] |= src[1 + i];
                }
                m.words.orBlock(block, src, 1);
            }
        }
    }

    private static void check(Model m, SplittableRandom r) {
        long bits = 0;
        for (long w : m.flat) {
            bits += Long.bitCount(w);
        }
        assertThat(m.words.bitCount()).isEqualTo(bits);
        for (int n = 0; n < 2_000; n++) {
            int i = randomIndex(r);
            assertThat(m.words.get(i)).as("word %d", i).isEqualTo(m.flat[i]);
        }
        // Every non-zero word lies in the allocated regions, which are walked in order.
        long seen = 0;
        long last = -1;
        for (long i = m.words.nextAllocated(0); i >= 0; i = m.words.nextAllocated(i)) {
            assertThat(i).isGreaterThan(last);
            for (long end = m.words.regionEnd(i); i < end; i++) {
                assertThat(m.words.get(i)).isEqualTo(m.flat[(int) i]);
                seen += Long.bitCount(m.words.get(i));
                last = i;
            }
        }
        assertThat(seen).isEqualTo(bits);
        int pageWords = m.words.blockWords();
        long p = m.words.nextNonEmptyPage(0, pageWords);
        for (int q = 0; q < WORDS / pageWords; q++) {
            boolean nonEmpty = false;
            for (int i = 0; i < pageWords; i++) {
                nonEmpty |= m.flat[q * pageWords + i] != 0;
            }
            if (nonEmpty) {
                assertThat(p).isEqualTo(q);
                p = m.words.nextNonEmptyPage(q + 1, pageWords);
            }
        }
        assertThat(p).isEqualTo(-1);
    }

    @ParameterizedTest(name = "blocks of {0} words")
    @ValueSource(ints = {1, 8, 1024})
    void readsAsAFlatArrayWouldUnderAnyMixOfWrites(int blockWords) {
        SplittableRandom r = new SplittableRandom(20 + blockWords);
        Model a = new Model(blockWords);
        Model b = new Model(blockWords);
        for (int round = 0; round < 4; round++) {
            for (int s = 0; s < 30_000; s++) {
                step(r.nextBoolean() ? a : b, r);
            }
            check(a, r);
            check(b, r);
        }
        // A copy is independent; a union is the OR.
        Model copy = new Model(blockWords);
        System.arraycopy(a.flat, 0, copy.flat, 0, WORDS);
        PagedWords copied = a.words.copy();
        a.words.set(7, 0x55);
        assertThat(copied.get(7)).isEqualTo(copy.flat[7]);
        a.flat[7] = 0x55;
        a.words.or(b.words);
        for (int i = 0; i < WORDS; i++) {
            a.flat[i] |= b.flat[i];
        }
        check(a, r);
    }

    @ParameterizedTest(name = "blocks of {0} words")
    @ValueSource(ints = {1, 8, 1024})
    void blocksCostingHalfAChunkBecomeTheChunk(int blockWords) {
        PagedWords words = new PagedWords(WORDS, blockWords);
        long[] page = new long[blockWords];
        page[0] = 1;
        long chunkBytes = 8L * PagedWords.CHUNK_WORDS;
        int b = 0;
        while (words.allocatedBytes() < chunkBytes) {
            words.orBlock(b++, page, 0);
        }
        // Held on their own, the blocks cost up to half a chunk (their arrays and table), then
        // their chunk took them.
        assertThat(b).isLessThan(PagedWords.CHUNK_WORDS / blockWords);
        assertThat(words.allocatedBytes()).isBetween(chunkBytes, chunkBytes + 4096);
        assertThat(words.bitCount()).isEqualTo(b);
        for (int i = 0; i < b; i++) {
            assertThat(words.get((long) i * blockWords)).isEqualTo(1);
        }
        // A block far away is held on its own again.
        words.orBlock(WORDS / blockWords - 1, page, 0);
        assertThat(words.allocatedBytes()).isLessThan(chunkBytes + 4096 + 1024 + 8L * blockWords);
    }
}
