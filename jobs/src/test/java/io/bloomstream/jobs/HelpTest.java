package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * Tests that {@code --help} of every command and subcommand prints its help and nothing else: exit
 * status 0, nothing on stderr, no warning on stdout. Each runs in a JVM of its own, as a user runs
 * the jar: picocli prints its own warnings (an option description it cannot format, an unescaped
 * {@code %}) on the {@code System.err} it saw when it was loaded, past the streams a test gives the
 * command line.
 */
class HelpTest {

    @TempDir Path dir;

    /** The arguments that ask each command of the tree, from {@link Main} down, for its help. */
    static Stream<List<String>> everyCommand() {
        List<List<String>> all = new ArrayList<>();
        walk(Main.commandLine(), new ArrayList<>(), all);
        return all.stream();
    }

    private static void walk(CommandLine cl, List<String> path, List<List<String>> all) {
        List<String> args = new ArrayList<>(path);
        args.add("--help");
        all.add(args);
        for (CommandLine sub : cl.getSubcommands().values()) {
            // aliases are the same command again
            if (sub.getCommandName().equals(sub.getCommandSpec().name())) {
                List<String> next = new ArrayList<>(path);
                next.add(sub.getCommandName());
                walk(sub, next, all);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void helpPrintsHelpAndNothingElse(List<String> args) throws Exception {
        Path out = dir.resolve("out");
        Path err = dir.resolve("err");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(args);
        Process p =
                new ProcessBuilder(command)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile())
                        .start();
        int status = p.waitFor();
        assertThat(read(err)).as("stderr of %s", args).isEmpty();
        assertThat(read(out)).as("stdout of %s", args).startsWith("Usage: ").doesNotContain("WARN");
        assertThat(status).as("exit status of %s", args).isZero();
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
