package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Tests for {@link JobOptions}. */
class JobOptionsTest {

    @Test
    void duplicatesAreTheShareOfRecordsThatRepeatAnId() {
        JobOptions o = JobOptions.parse(new String[] {"--ids=900", "--duplicates=0.1"});
        assertThat(Math.round(900 * o.duplication())).isEqualTo(1000); // 100 of 1000 repeat
        assertThat(JobOptions.parse(new String[] {"--duplicates=0.5"}).duplication()).isEqualTo(2);
        assertThat(JobOptions.parse(new String[0]).duplication()).isEqualTo(2);
    }

    @Test
    void refusesBothDuplicationFlagsAndAShareOfOne() {
        assertThatThrownBy(
                        () ->
                                JobOptions.parse(
                                        new String[] {"--duplication=2", "--duplicates=0.5"}))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> JobOptions.parse(new String[] {"--duplicates=1"}))
                .hasMessageContaining("[0, 1)");
    }

    @Test
    void acceptsRocksDbWithItsBloomFiltersAndRounds() {
        JobOptions o = JobOptions.parse(new String[] {"--backends=rocksdb-bloom", "--rounds=3"});
        assertThat(o.backends()).containsExactly("rocksdb-bloom");
        assertThat(o.rounds()).isEqualTo(3);
        assertThatThrownBy(() -> JobOptions.parse(new String[] {"--rounds=0"}))
                .hasMessageContaining("--rounds");
    }
}
