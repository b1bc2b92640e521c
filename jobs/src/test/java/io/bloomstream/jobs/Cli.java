package io.bloomstream.jobs;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine;

/**
 * Runs the command line in-process and keeps what it printed; finds the test data and free ports
 * for the tests of every package here.
 */
public final class Cli {
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    int run(String... args) {
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    /** Every line of the part files under {@code dir} (not its hidden or _ subdirectories). */
    static java.util.List<String> readParts(Path dir) throws java.io.IOException {
        java.util.List<String> lines = new java.util.ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files.sorted()::iterator) {
                String name = f.getFileName().toString();
                if (Files.isRegularFile(f) && name.startsWith("part-")) {
                    lines.addAll(Files.readAllLines(f));
                }
            }
        }
        return lines;
    }

    /** The committed {@code testdata/} directory, found from the working directory up. */
    public static Path testdata() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("testdata/spam"))) {
                return p.resolve("testdata");
            }
        }
        throw new IllegalStateException(
                "testdata/ not found above " + Path.of("").toAbsolutePath());
    }

    /** A free TCP port on the loopback interface. */
    public static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s =
                new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
