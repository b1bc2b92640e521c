package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link CounterPages} against a plain {@code int[]} of the same counters. */
class CounterPagesTest {

    private final FilterSpec spec =
            FilterSpec.builder().expectedItems(10_000).fpp(0.01).pageBits(2048).build();

    @Test
    void countersKeepTheirValuesThroughEveryWidening() {
        Random random = new Random(7);
        long[] words = CounterPages.empty(spec);
        int cells = Pages.words(spec) * 64;
        int[] model = new int[cells];
        int width = CounterPages.width(spec, words);
        assertThat(width).isEqualTo(CounterPages.MIN_WIDTH);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 5_000; i++) {
                int cell = random.nextInt(cells);
                int value = random.nextInt(CounterPages.max(width) + 1);
                CounterPages.set(words, width, cell, value);
                model[cell] = value;
            }
            for (int c = 0; c < cells; c++) {
                assertThat(CounterPages.get(words, width, c)).as("cell %d", c).isEqualTo(model[c]);
            }
            if (width < CounterPages.MAX_WIDTH) {
                words = CounterPages.widen(words, width);
                width *= 2;
                assertThat(CounterPages.width(spec, words)).isEqualTo(width);
                for (int c = 0; c < cells; c++) {
                    assertThat(CounterPages.get(words, width, c)).isEqualTo(model[c]);
                }
            }
        }
        assertThat(CounterPages.isEmpty(words)).isFalse();
        assertThat(CounterPages.isEmpty(CounterPages.empty(spec))).isTrue();
    }

    @Test
    void aPageOfAnotherLengthIsRefused() {
        assertThatThrownBy(() -> CounterPages.width(spec, new long[Pages.words(spec) * 3]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not fit");
    }
}
