package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.ScalableBloomFilter;
import java.lang.reflect.Field;
import org.junit.jupiter.api.Test;

/** Tests for {@link FilterSizing}'s split of the rate budget over cascade stages. */
class FilterSizingTest {

    @Test
    void stageRatesOfTheFirstStageShareSumToAtMostTheBudget() {
        FilterSizing sizing = FilterSizing.builder().scalable(2, 0.7).firstStageShare(0.9).build();
        double sum = 0;
        for (int stage = 0; stage < 200; stage++) {
            sum += sizing.stageRate(0.01, stage);
        }
        assertThat(sizing.stageRate(0.01, 0)).isEqualTo(0.009, within());
        assertThat(sum).isLessThanOrEqualTo(0.01);
    }

    @Test
    void withoutAShareTheSplitIsAlmeidas() {
        FilterSizing sizing = FilterSizing.builder().scalable(2, 0.7).build();
        assertThat(sizing.firstStageShare()).isEqualTo(0.3, within());
        for (int stage = 0; stage < 5; stage++) {
            assertThat(sizing.stageRate(0.01, stage))
                    .isEqualTo(ScalableBloomFilter.stageFpp(0.01, 0.7, stage));
        }
    }

    /**
     * A {@code FilterSizing} Java-serialized before the share existed reads it as 0.0 (serialized
     * forms of the same serialVersionUID leave a new field at its default): it must keep Almeida's
     * split, not put no budget on its first stage.
     */
    @Test
    void aShareOfZeroFromAnOlderSerializedFormMeansAlmeidasSplit() throws Exception {
        FilterSizing sizing = FilterSizing.builder().scalable(2, 0.7).build();
        Field share = FilterSizing.class.getDeclaredField("firstStageShare");
        share.setAccessible(true);
        share.setDouble(sizing, 0.0);
        assertThat(sizing.firstStageShare()).isEqualTo(0.3, within());
        assertThat(sizing.stageRate(0.01, 0)).isEqualTo(ScalableBloomFilter.stageFpp(0.01, 0.7, 0));
    }

    @Test
    void refusesAShareOutsideZeroToOne() {
        assertThatThrownBy(() -> FilterSizing.builder().firstStageShare(1.0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("firstStageShare");
        assertThatThrownBy(() -> FilterSizing.builder().firstStageShare(0.0))
                .hasMessageContaining("was 0.0");
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(1e-12);
    }
}
