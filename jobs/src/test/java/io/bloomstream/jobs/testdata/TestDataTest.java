package io.bloomstream.jobs.testdata;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The committed test data is exactly what the seeded generator writes. */
class TestDataTest {

    @Test
    void committedFilesAreReproducedByteForByte(@TempDir Path tmp) throws Exception {
        assertThat(Main.run("generate-testdata", "--output", tmp.toString())).isZero();
        Path committed = Cli.testdata();
        List<Path> generated;
        try (Stream<Path> files = Files.walk(tmp)) {
            generated = files.filter(Files::isRegularFile).collect(Collectors.toList());
        }
        assertThat(generated).hasSizeGreaterThanOrEqualTo(10);
        for (Path g : generated) {
            Path c = committed.resolve(tmp.relativize(g).toString());
            assertThat(c).as("committed %s", c).exists();
            assertThat(Files.mismatch(g, c))
                    .as("%s differs from the generator's output", c)
                    .isEqualTo(-1);
        }
    }
}
