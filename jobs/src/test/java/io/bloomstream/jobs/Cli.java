package io.bloomstream.jobs;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * Runs the command line in-process and keeps what it printed, and reads its JSON; finds the test
 * data and free ports for the tests of every package here.
 */
public final class Cli {
    /** What the commands printed on stdout. */
    public final StringWriter out = new StringWriter();

    /** What the commands printed on stderr. */
    public final StringWriter err = new StringWriter();

    /** Runs one command line; returns its exit status. */
    public int run(String... args) {
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    /** Every line of the part files under {@code dir} (not its hidden or _ subdirectories). */
    public static java.util.List<String> readParts(Path dir) throws java.io.IOException {
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

    /**
     * A JSON object printed by a command (numbers as Long or Double, arrays as lists, objects as
     * maps).
     */
    public static Map<String, Object> json(String text) throws IOException {
        try (JsonParser p = new JsonFactory().createParser(text.trim())) {
            p.nextToken();
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) value(p);
            return m;
        }
    }

    private static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT:
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    m.put(name, value(p));
                }
                return m;
            case START_ARRAY:
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(value(p));
                }
                return list;
            case VALUE_NUMBER_INT:
                return p.getLongValue();
            case VALUE_NUMBER_FLOAT:
                return p.getDoubleValue();
            case VALUE_TRUE:
                return true;
            case VALUE_FALSE:
                return false;
            case VALUE_NULL:
                return null;
            default:
                return p.getText();
        }
    }
}
