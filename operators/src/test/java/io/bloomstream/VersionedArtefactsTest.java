package io.bloomstream;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tests for the table of versioned artefacts in docs/state.md ("Versioned artefacts"): it must say
 * what the code writes, and every version it lists must have its golden files, so that a new
 * version without a row, a {@code VERSION_N} constant or a golden file fails here.
 */
class VersionedArtefactsTest {

    private static final Path PAGE = Path.of("../docs/state.md");
    private static final String SECTION = "## Versioned artefacts";
    private static final Path RESOURCES = Path.of("src/test/resources");
    private static final Path TESTS = Path.of("src/test/java");

    /** The library's compiled classes (main only). */
    private static final Path CLASSES = Path.of("target/classes");

    /** The names of version constants: a class declaring one must have its rows in the table. */
    private static final Pattern VERSION_CONSTANT =
            Pattern.compile("VERSION(_[0-9]+)?|CURRENT_VERSION|LAYOUT_VERSION|STATE_LAYOUT");

    /** Classes whose versions have no {@code VERSION_N} constants yet: none. */
    private static final Set<String> WITHOUT_VERSION_N = Set.of();

    /** One row of the table. */
    record Row(
            String artefact,
            String constant,
            int version,
            List<String> tests,
            List<String> goldenFiles) {}

    private static final Map<String, List<Row>> ARTEFACTS = new LinkedHashMap<>();

    @BeforeAll
    static void readTheTable() throws IOException {
        ARTEFACTS.clear();
        String constant = null;
        for (List<String> cells : tableRows(Files.readAllLines(PAGE))) {
            String artefact = strip(cells.get(0));
            if (!ARTEFACTS.containsKey(artefact)) {
                constant = strip(cells.get(2));
            }
            ARTEFACTS
                    .computeIfAbsent(artefact, a -> new ArrayList<>())
                    .add(
                            new Row(
                                    artefact,
                                    constant,
                                    Integer.parseInt(strip(cells.get(3))),
                                    codeSpans(cells.get(6)),
                                    codeSpans(cells.get(7))));
        }
        assertThat(ARTEFACTS).as("artefacts in the table of " + PAGE).hasSizeGreaterThan(5);
    }

    @Test
    void everyArtefactListsItsVersionsFromOneAndItsConstantIsTheNewest() throws Exception {
        for (List<Row> rows : ARTEFACTS.values()) {
            String artefact = rows.get(0).artefact();
            assertThat(rows.stream().map(Row::version))
                    .as("versions of %s, in order", artefact)
                    .containsExactlyElementsOf(
                            Stream.iterate(1, v -> v + 1).limit(rows.size()).toList());
            assertThat(constantValue(rows.get(0).constant()))
                    .as("%s (%s) against the newest version in the table", artefact, rows)
                    .isEqualTo(rows.size());
        }
    }

    @Test
    void everyVersionHasItsOwnConstant() throws Exception {
        for (List<Row> rows : ARTEFACTS.values()) {
            Class<?> owner = ownerOf(rows.get(0).constant());
            if (WITHOUT_VERSION_N.contains(owner.getName())) {
                continue;
            }
            for (Row row : rows) {
                Field f = versionField(owner, row.version(), row.artefact());
                assertThat(f.getInt(null)).as(f.toString()).isEqualTo(row.version());
            }
        }
    }

    @Test
    void everyVersionHasGoldenFilesThatExist() {
        for (List<Row> rows : ARTEFACTS.values()) {
            for (Row row : rows) {
                assertThat(row.goldenFiles())
                        .as("golden files of %s version %d", row.artefact(), row.version())
                        .isNotEmpty();
                for (String pattern : row.goldenFiles()) {
                    for (String file : expand(pattern)) {
                        assertThat(RESOURCES.resolve(file))
                                .as("golden file of %s version %d", row.artefact(), row.version())
                                .isRegularFile();
                    }
                }
            }
        }
    }

    @Test
    void everyGoldenTestNamedExists() throws IOException {
        Set<String> testClasses = new TreeSet<>();
        try (Stream<Path> files = Files.walk(TESTS)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".java"))
                    .forEach(n -> testClasses.add(n.substring(0, n.length() - 5)));
        }
        for (List<Row> rows : ARTEFACTS.values()) {
            for (Row row : rows) {
                assertThat(row.tests()).as("tests of %s", row).isNotEmpty();
                assertThat(testClasses).as("tests of %s", row).containsAll(row.tests());
            }
        }
    }

    @Test
    void everyClassWithAVersionConstantHasItsRows() throws Exception {
        Set<String> inTable = new TreeSet<>();
        for (List<Row> rows : ARTEFACTS.values()) {
            inTable.add(ownerName(rows.get(0).constant()));
        }
        Set<String> declaring = new TreeSet<>();
        List<Path> classFiles;
        try (Stream<Path> files = Files.walk(CLASSES)) {
            classFiles = files.filter(p -> p.toString().endsWith(".class")).toList();
        }
        assertThat(classFiles).as("classes under " + CLASSES).hasSizeGreaterThan(50);
        for (Path file : classFiles) {
            String name = CLASSES.relativize(file).toString();
            name = name.substring(0, name.length() - ".class".length()).replace('/', '.');
            Class<?> c = Class.forName(name, false, getClass().getClassLoader());
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())
                        && Modifier.isFinal(f.getModifiers())
                        && f.getType() == int.class
                        && VERSION_CONSTANT.matcher(f.getName()).matches()) {
                    declaring.add(c.getName());
                }
            }
        }
        assertThat(inTable).as("classes in the table of " + PAGE).containsAll(declaring);
    }

    @Test
    void expandsEveryBraceGroup() {
        assertThat(expand("a-{1,2}-{x,y}.bin"))
                .containsExactly("a-1-x.bin", "a-1-y.bin", "a-2-x.bin", "a-2-y.bin");
        assertThat(expand("plain")).containsExactly("plain");
    }

    /** The cells of the table's body rows after {@link #SECTION}. */
    private static List<List<String>> tableRows(List<String> lines) {
        int start = lines.indexOf(SECTION);
        assertThat(start).as(SECTION + " in " + PAGE).isNotNegative();
        List<List<String>> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("|")) {
                inTable = true;
                List<String> cells = cells(line);
                if (!cells.get(0).equals("artefact") && !cells.get(0).startsWith("---")) {
                    assertThat(cells).as(line).hasSize(8);
                    rows.add(cells);
                }
            } else if (inTable || line.startsWith("## ")) {
                break;
            }
        }
        return rows;
    }

    /** A row's cells, split at pipes that are not escaped ({@code \|}), trimmed. */
    private static List<String> cells(String line) {
        String inner = line.trim().substring(1, line.trim().length() - 1);
        List<String> cells = new ArrayList<>();
        for (String c : inner.split("(?<!\\\\)\\|", -1)) {
            cells.add(c.trim());
        }
        return cells;
    }

    /** A cell without its backticks. */
    private static String strip(String cell) {
        return cell.replace("`", "").trim();
    }

    /** The code spans ({@code `...`}) of a cell, in order. */
    private static List<String> codeSpans(String cell) {
        List<String> spans = new ArrayList<>();
        Matcher m = Pattern.compile("`([^`]+)`").matcher(cell);
        while (m.find()) {
            spans.add(m.group(1));
        }
        return spans;
    }

    /** Every path a pattern names: each {@code {a,b}} group stands for each of its parts. */
    static List<String> expand(String pattern) {
        int open = pattern.indexOf('{');
        if (open < 0) {
            return List.of(pattern);
        }
        int close = pattern.indexOf('}', open);
        List<String> out = new ArrayList<>();
        for (String part : pattern.substring(open + 1, close).split(",")) {
            out.addAll(expand(pattern.substring(0, open) + part + pattern.substring(close + 1)));
        }
        return out;
    }

    private static String ownerName(String constant) {
        return constant.substring(0, constant.lastIndexOf('.'));
    }

    private static Class<?> ownerOf(String constant) throws ClassNotFoundException {
        return Class.forName(ownerName(constant));
    }

    private static int constantValue(String constant) throws Exception {
        Field f =
                field(
                        ownerOf(constant),
                        constant.substring(constant.lastIndexOf('.') + 1),
                        "the table's constant");
        assertThat(Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers()))
                .as(constant + " is a constant")
                .isTrue();
        return f.getInt(null);
    }

    /**
     * The constant {@code VERSION_n} of {@code owner}, or its one {@code VERSION_n_NAME} (a version
     * with a name of its own, such as {@code BloomAccumulator.VERSION_2_COUNTING}).
     */
    private static Field versionField(Class<?> owner, int n, String what) {
        String name = "VERSION_" + n;
        List<Field> named = new ArrayList<>();
        for (Field f : owner.getDeclaredFields()) {
            if (f.getName().equals(name)) {
                return field(owner, name, what);
            }
            if (f.getName().startsWith(name + "_")) {
                named.add(f);
            }
        }
        if (named.size() == 1) {
            return field(owner, named.get(0).getName(), what);
        }
        throw new AssertionError(
                owner.getName()
                        + " has no field "
                        + name
                        + (named.isEmpty() ? "" : " and more than one " + name + "_*: " + named)
                        + " ("
                        + what
                        + ")");
    }

    private static Field field(Class<?> owner, String name, String what) {
        try {
            Field f = owner.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException e) {
            throw new AssertionError(owner.getName() + " has no field " + name + " (" + what + ")");
        }
    }
}
