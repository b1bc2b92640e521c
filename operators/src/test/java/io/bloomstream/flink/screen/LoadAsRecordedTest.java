package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link ScreenFilterLoader#loadAsRecorded} (SQL's reader, which has no key) next to the
 * screen's {@link ScreenFilterLoader#load} in one JVM: the filters they share are keyed by the
 * hasher too, so a keyed filter a screen decoded with its key is never served without it.
 */
class LoadAsRecordedTest {

    @TempDir Path tmp;

    @Test
    void aKeyedFilterAScreenDecodedIsNotServedToSql() throws Exception {
        Hasher keyed = Hasher.sipHash24(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder().expectedItems(100).fpp(0.01).hasher(keyed).build());
        f.add("listed");
        Path file = tmp.resolve("keyed.bloom");
        Files.write(file, FilterCodec.encode(f));
        ScreenFilterLoader.Loaded screen =
                ScreenFilterLoader.load(file.toString(), 1, null, Normalization.LOWERCASE, keyed);
        try {
            assertThat(screen.filter().mightContain("listed")).isTrue();
            ScreenFilterLoader.BadFilterFileException e =
                    catchThrowableOfType(
                            () -> ScreenFilterLoader.loadAsRecorded(file.toString()),
                            ScreenFilterLoader.BadFilterFileException.class);
            assertThat(e).isNotNull();
            assertThat(e.problem()).contains("keyed").contains("SQL");
            assertThat(SharedFilters.uses(file.toString())).isEqualTo(1);
        } finally {
            screen.release();
        }
        assertThat(SharedFilters.uses(file.toString())).isZero();
    }
}
