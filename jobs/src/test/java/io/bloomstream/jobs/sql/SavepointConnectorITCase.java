package io.bloomstream.jobs.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.io.StateDir;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the SQL of docs/state.md, "Reading a savepoint from SQL": its code blocks, read from
 * the page and run as written (only {@code 'state.path'} replaced) through the Table API in batch
 * mode against savepoints that {@code bloomstream dedup --state-dir} takes, global and per key; and
 * the page's claims about what Flink 2.3's {@code savepoint} connector cannot read, with the errors
 * the page quotes.
 *
 * <p>The dedups run with {@code --fpp 1e-6}: over these 2,000 and 700 ids the chance of any false
 * positive is below 0.002, and which ids collide is fixed by the ids (fixed seed), so every id
 * passes once and the items the filters took in are exactly the distinct ids.
 */
class SavepointConnectorITCase {

    private static final String SECTION = "## Reading a savepoint from SQL";

    private static final Pattern STATE_PATH = Pattern.compile("'state\\.path' = '[^']*'");

    private static final Pattern METADATA_PATH = Pattern.compile("savepoint_metadata\\('[^']*'\\)");

    private static final int GLOBAL_IDS = 2000;

    private static final int KEYED_IDS = 700;

    private static final int KEYS = 7;

    @TempDir static Path tmp;

    private static Path globalSavepoint;

    private static Path keyedSavepoint;

    /** The fenced {@code sql} blocks of the section, in page order. */
    private static List<String> blocks;

    private static String section;

    @BeforeAll
    static void dedupAndReadThePage() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < GLOBAL_IDS; i++) {
            lines.add("id-" + i);
            lines.add("id-" + i);
        }
        Collections.shuffle(lines, new Random(43));
        Path in = Files.write(tmp.resolve("ids.txt"), lines, StandardCharsets.UTF_8);
        globalSavepoint = dedup(in, tmp.resolve("global"));

        List<String> json = new ArrayList<>();
        for (int i = 0; i < KEYED_IDS; i++) {
            String line = "{\"id\": \"id-" + i + "\", \"user\": \"u" + (i % KEYS) + "\"}";
            json.add(line);
            json.add(line);
        }
        Collections.shuffle(json, new Random(44));
        Path jin = Files.write(tmp.resolve("ids.jsonl"), json, StandardCharsets.UTF_8);
        keyedSavepoint =
                dedup(
                        jin,
                        tmp.resolve("keyed"),
                        "--format",
                        "json",
                        "--id-field",
                        "id",
                        "--key-field",
                        "user");

        String page =
                Files.readString(
                        Cli.testdata().getParent().resolve("docs/state.md"),
                        StandardCharsets.UTF_8);
        int start = page.indexOf(SECTION);
        assertThat(start).as("docs/state.md has the section " + SECTION).isNotNegative();
        int end = page.indexOf("\n## ", start + SECTION.length());
        section = end < 0 ? page.substring(start) : page.substring(start, end);
        blocks = new ArrayList<>();
        Matcher m = Pattern.compile("```sql\n(.*?)```", Pattern.DOTALL).matcher(section);
        while (m.find()) {
            blocks.add(m.group(1));
        }
        assertThat(blocks).as("the section's sql blocks").hasSize(4);
    }

    /** Runs {@code dedup --state-dir} over {@code input}; returns the savepoint it kept. */
    private static Path dedup(Path input, Path dir, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("dedup", "--quiet", "--fpp", "1e-6"));
        args.addAll(List.of("--state-dir", dir.resolve("state").toString()));
        args.addAll(List.of("--input", input.toString()));
        args.addAll(List.of("--output", dir.resolve("out").toString()));
        args.addAll(List.of(more));
        Cli cli = new Cli();
        assertThat(cli.run(args.toArray(new String[0]))).as(cli.err.toString()).isZero();
        return StateDir.at(dir.resolve("state")).latest().orElseThrow();
    }

    /** The block with its paths pointing at {@code savepoint}. */
    private static String at(String block, Path savepoint) {
        String uri = savepoint.toUri().toString();
        String sql =
                STATE_PATH
                        .matcher(block)
                        .replaceAll(Matcher.quoteReplacement("'state.path' = '" + uri + "'"));
        return METADATA_PATH
                .matcher(sql)
                .replaceAll(Matcher.quoteReplacement("savepoint_metadata('" + uri + "')"));
    }

    /** Runs each statement of {@code script}; returns the rows of the last. */
    private static List<Row> run(String script) throws Exception {
        TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        env.getConfig().set("pipeline.generic-types", "false");
        env.getConfig().set("parallelism.default", "1");
        List<Row> rows = new ArrayList<>();
        for (String statement : script.split(";\\s*(\n|$)")) {
            if (statement.isBlank()) {
                continue;
            }
            rows.clear();
            try (CloseableIterator<Row> it = env.executeSql(statement).collect()) {
                it.forEachRemaining(rows::add);
            }
        }
        return rows;
    }

    /**
     * The messages of the failure of {@code script}, which must fail, with those of the task
     * failures Flink logged meanwhile. A reader task's own error can lose the race to be the job's
     * failure cause against the split enumerator's "no more splits" event, which then finds the
     * task failed ("Task is not running, but in state FAILED"; one run in three, and every run of
     * three under load in CI): the task's own error is then only in the log, where the task
     * executor writes it with its cause.
     */
    private static List<String> failureOf(String script) {
        List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        org.apache.logging.log4j.core.LoggerContext context =
                (org.apache.logging.log4j.core.LoggerContext)
                        org.apache.logging.log4j.LogManager.getContext(false);
        org.apache.logging.log4j.core.config.LoggerConfig root =
                context.getConfiguration().getRootLogger();
        org.apache.logging.log4j.Level level = root.getLevel();
        String name = "capture-" + java.util.UUID.randomUUID();
        org.apache.logging.log4j.core.appender.AbstractAppender capture =
                new org.apache.logging.log4j.core.appender.AbstractAppender(
                        name,
                        null,
                        null,
                        true,
                        org.apache.logging.log4j.core.config.Property.EMPTY_ARRAY) {
                    @Override
                    public void append(org.apache.logging.log4j.core.LogEvent event) {
                        for (Throwable t = event.getThrown(); t != null; t = t.getCause()) {
                            logged.add(String.valueOf(t.getMessage()));
                        }
                    }
                };
        capture.start();
        if (level.isMoreSpecificThan(org.apache.logging.log4j.Level.ERROR)) {
            root.setLevel(org.apache.logging.log4j.Level.WARN);
        }
        root.addAppender(capture, org.apache.logging.log4j.Level.WARN, null);
        context.updateLoggers();
        try {
            run(script);
            throw new AssertionError("no failure: " + script);
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            List<String> messages = messages(e);
            messages.addAll(logged);
            return messages;
        } finally {
            root.removeAppender(name);
            root.setLevel(level);
            context.updateLoggers();
            capture.stop();
        }
    }

    /** The messages of {@code e}, its causes and what they suppressed. */
    private static List<String> messages(Throwable e) {
        List<String> out = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.Deque<Throwable> todo = new java.util.ArrayDeque<>(List.of(e));
        while (!todo.isEmpty()) {
            Throwable t = todo.pop();
            if (!seen.add(t)) {
                continue;
            }
            out.add(String.valueOf(t.getMessage()));
            if (t.getCause() != null) {
                todo.push(t.getCause());
            }
            todo.addAll(List.of(t.getSuppressed()));
        }
        return out;
    }

    @Test
    void savepointMetadataListsTheDedupUid() throws Exception {
        List<Row> rows = run(at(blocks.get(0), globalSavepoint));
        assertThat(rows).extracting(r -> r.getField(0)).contains("bloom-dedup");
    }

    @Test
    void globalDedupsMetadataCountsEveryIdThatPassedOnceOverItsShards() throws Exception {
        List<String> passed = Cli.readParts(tmp.resolve("global/out"));
        assertThat(passed).doesNotHaveDuplicates().hasSize(GLOBAL_IDS);

        List<Row> rows = run(at(blocks.get(1), globalSavepoint));
        assertThat(rows).hasSize(1);
        Row r = rows.get(0);
        long shards = (Long) r.getField("shards");
        // 2,000 ids over 1,024 shards reach about 1,024 (1 - e^(-2000/1024)) = 880 of them.
        assertThat(shards).isBetween(700L, 1024L);
        assertThat((Long) r.getField("items")).isEqualTo(passed.size());
        // each id sets bits in one page: a shard that took n ids has 1 to n pages
        assertThat((Long) r.getField("pages")).isBetween(shards, (long) passed.size());
        assertThat((Double) r.getField("fullest_stage_load")).isGreaterThan(0.0).isLessThan(1.0);

        String rocksdb =
                blocks.get(1)
                        .replace(
                                "'connector' = 'savepoint',",
                                "'connector' = 'savepoint', 'state.backend.type' = 'rocksdb',");
        assertThat(run(at(rocksdb, globalSavepoint))).isEqualTo(rows);
    }

    @Test
    void perKeyDedupsMetadataCountsEachKeysDistinctIds() throws Exception {
        Map<String, Long> expected = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < KEYED_IDS; i++) {
            if (seen.add("id-" + i)) {
                expected.merge("u" + (i % KEYS), 1L, Long::sum);
            }
        }
        Map<String, Long> items = new HashMap<>();
        for (Row r : run(at(blocks.get(2), keyedSavepoint))) {
            String key = (String) r.getField("key");
            long n = (Long) r.getField("items");
            // each id sets bits in one page: a key that took n ids has 1 to n pages
            assertThat((Long) r.getField("pages")).as(key).isBetween(1L, n);
            assertThat(items.put(key, n)).isNull();
        }
        assertThat(items).isEqualTo(expected);
    }

    @Test
    void pagesCannotBeReadAsTheDocsSay() {
        String meta = blocks.get(1).substring(0, blocks.get(1).indexOf("SELECT"));
        String ddl =
                meta.replaceAll(
                        "(?s)`bloom-meta` ROW<.*?>>>>,",
                        Matcher.quoteReplacement("`bloom-pages` MAP<BIGINT, ARRAY<BIGINT>>,"));
        assertThat(ddl).contains("`bloom-pages`").doesNotContain("bloom-meta");
        String query = "SELECT shard, CARDINALITY(`bloom-pages`) FROM dedup_state";
        String array = "Array conversion supports only Iterable but received: [J";
        assertThat(failureOf(at(ddl, globalSavepoint) + query)).contains(array);
        String bytes = ddl.replace("ARRAY<BIGINT>>", "BYTES>");
        String bytesError =
                "Byte array conversion supports only ByteBuffer and byte[] but received: [J";
        assertThat(failureOf(at(bytes, globalSavepoint) + query)).contains(bytesError);
        assertThat(section)
                .contains("`` `bloom-pages` MAP<BIGINT, ARRAY<BIGINT>> ``")
                .contains("`Array conversion supports only Iterable but received: [J`")
                .contains(
                        "`Byte array conversion supports only ByteBuffer and byte[] but received:"
                                + " [J`")
                .contains("`KeyedStateReader.convertToArray(Object, LogicalType)`")
                .contains(
                        "`if (object instanceof long[]) { return new GenericArrayData((long[])"
                                + " object); }`");
    }

    @Test
    void aColumnNamedOtherwiseIsNotFoundInTheSavepoint() {
        String meta = blocks.get(1).substring(0, blocks.get(1).indexOf("SELECT"));
        String renamed =
                meta.replace("`bloom-meta` ROW", "m ROW")
                        .replace(
                                "'connector' = 'savepoint',",
                                "'connector' = 'savepoint', 'fields.m.state-name' ="
                                        + " 'bloom-meta',");
        assertThatThrownBy(() -> run(at(renamed, globalSavepoint) + "SELECT * FROM dedup_state"))
                .satisfies(
                        e ->
                                assertThat(messages(e))
                                        .anySatisfy(
                                                m ->
                                                        assertThat(m)
                                                                .startsWith(
                                                                        "Unable to infer state"
                                                                                + " format for SQL"
                                                                                + " type")
                                                                .endsWith("fields.m.value-class")));
        String kryo =
                renamed.replace(
                        "'fields.m.state-name' = 'bloom-meta',",
                        "'fields.m.state-name' = 'bloom-meta', 'fields.m.value-class' ="
                                + " 'io.bloomstream.flink.state.FilterMeta',");
        Predicate<String> refused =
                m -> m.contains("KryoSerializer") && m.contains("FilterMetaSerializer");
        assertThat(failureOf(at(kryo, globalSavepoint) + "SELECT * FROM dedup_state"))
                .anyMatch(refused);
        assertThat(section).contains("`Unable to infer state format for SQL type`");
    }

    @Test
    void theFactoryReadsTheMetadataIntoAColumnOfAnyName() throws Exception {
        String global = blocks.get(1);
        String named =
                global.replace("`bloom-meta` ROW", "meta ROW")
                        .replace("d.`bloom-meta`.slots", "d.meta.slots")
                        .replace(
                                "'connector' = 'savepoint',",
                                "'connector' = 'savepoint',\n" + blocks.get(3).trim() + ",");
        assertThat(named).doesNotContain("bloom-meta`").contains("FilterMetaTypeFactory");
        assertThat(run(at(named, globalSavepoint))).isEqualTo(run(at(global, globalSavepoint)));
    }
}
