package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.junit.jupiter.api.Test;

/** Tests for {@link BuildVersion}: {@code --version} prints the pom's version. */
class VersionTest {

    @Test
    void versionPrintsThePomsVersionAndBothFlinks() throws Exception {
        Cli cli = new Cli();
        assertThat(cli.run("--version")).isZero();

        assertThat(cli.out.toString())
                .startsWith("bloomstream " + pomVersion() + System.lineSeparator())
                .contains("built against Flink " + BuildVersion.builtAgainstFlink())
                .contains("running on Flink " + EnvironmentInformation.getVersion());
        assertThat(BuildVersion.builtAgainstFlink()).matches("2\\.\\d+\\.\\d+");
    }

    /** The version in the parent pom, read from the file, not from the build. */
    private static String pomVersion() throws Exception {
        Path pom = Cli.testdata().getParent().resolve("pom.xml");
        Matcher m =
                Pattern.compile(
                                "<artifactId>bloomstream-parent</artifactId>\\s*"
                                        + "<version>([^<]+)</version>")
                        .matcher(Files.readString(pom));
        assertThat(m.find()).as("the parent's version in %s", pom).isTrue();
        return m.group(1);
    }
}
