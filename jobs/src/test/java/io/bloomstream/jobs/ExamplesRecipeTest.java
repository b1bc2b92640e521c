package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Tests that the README's recipe for a user's own job ("In your own Flink job") and its project,
 * {@code examples/}, hold what a Maven 3.8 user needs first: a pinned maven-compiler-plugin (Maven
 * 3.8's default, 3.1, knows no {@code release}) and a logging binding with a configuration, without
 * which the operators' restore messages are logged nowhere. {@link ExamplesITCase} builds and runs
 * the project.
 */
class ExamplesRecipeTest {

    private static final Path ROOT = Cli.testdata().getParent();

    private static String recipe() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        int start = readme.indexOf("## In your own Flink job");
        int end = readme.indexOf("\n## ", start);
        assertThat(start).isNotNegative();
        return readme.substring(start, end);
    }

    @Test
    void theExamplesPomPinsTheCompilerAndHasALoggingBinding() throws Exception {
        String pom = Files.readString(ROOT.resolve("examples/pom.xml"));
        assertThat(pom)
                .containsPattern(
                        "<artifactId>maven-compiler-plugin</artifactId>\\s*<version>3\\.1[0-9]\\.");
        assertThat(pom).contains("<artifactId>log4j-slf4j-impl</artifactId>");
        assertThat(pom).contains("<artifactId>log4j-core</artifactId>");
        String config =
                Files.readString(ROOT.resolve("examples/src/main/resources/log4j2.properties"));
        assertThat(config).contains("logger.bloomstream.name = io.bloomstream");
        assertThat(config).contains("logger.bloomstream.level = INFO");
    }

    @Test
    void theReadmeRecipeSaysSo() throws Exception {
        String recipe = recipe();
        assertThat(recipe).contains("<artifactId>maven-compiler-plugin</artifactId>");
        assertThat(recipe).contains("Maven 3.8");
        assertThat(recipe).contains("<artifactId>log4j-slf4j-impl</artifactId>");
        assertThat(recipe).contains("log4j2.properties");
    }
}
