package io.bloomstream.table;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;

/** Table environments on the test mini cluster, the committed click data and its truth. */
final class SqlHarness {

    private SqlHarness() {}

    /** The mini cluster of the SQL ITs: two task managers with two slots each. */
    static MiniClusterExtension miniCluster() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(2)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }

    /** The committed {@code testdata/} directory, found from the working directory up. */
    static Path testdata() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("testdata/count"))) {
                return p.resolve("testdata");
            }
        }
        throw new IllegalStateException(
                "testdata/ not found above " + Path.of("").toAbsolutePath());
    }

    /** A streaming table environment on {@code backend} with Kryo disabled and every function. */
    static TableEnvironment streaming(String backend, int parallelism) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        conf.setString("table.local-time-zone", "UTC");
        TableEnvironment env =
                TableEnvironment.create(
                        EnvironmentSettings.newInstance()
                                .inStreamingMode()
                                .withConfiguration(conf)
                                .build());
        BloomFunctions.registerAll(env);
        return env;
    }

    /**
     * Declares {@code clicks} over the JSON lines at {@code path} (a file or a directory), with the
     * event time {@code t} and its watermark.
     */
    static void createClicks(TableEnvironment env, Path path, String extraOptions) {
        createClicks(env, path, extraOptions, true);
    }

    /** {@link #createClicks(TableEnvironment, Path, String)}, with or without event time. */
    static void createClicks(
            TableEnvironment env, Path path, String extraOptions, boolean eventTime) {
        env.executeSql(
                "CREATE TEMPORARY TABLE clicks ("
                        + " ts BIGINT, `user` STRING, page STRING"
                        + (eventTime
                                ? ", t AS TO_TIMESTAMP_LTZ(ts, 3),"
                                        + " WATERMARK FOR t AS t - INTERVAL '1' SECOND"
                                : "")
                        + ") WITH ('connector' = 'filesystem', 'format' = 'json',"
                        + " 'path' = '"
                        + path.toUri()
                        + "'"
                        + extraOptions
                        + ")");
    }

    /** The committed clicks file. */
    static Path clicksFile() {
        return testdata().resolve("count/clicks.jsonl");
    }

    /** One click of the committed data. */
    record Click(long ts, String user, String page) {}

    private static final Pattern CLICK =
            Pattern.compile("\\{\"ts\":(\\d+),\"user\":\"([^\"]+)\",\"page\":\"([^\"]+)\"\\}");

    static List<Click> clicks() throws IOException {
        List<Click> out = new ArrayList<>();
        for (String line : Files.readAllLines(clicksFile(), StandardCharsets.UTF_8)) {
            Matcher m = CLICK.matcher(line);
            if (!m.matches()) {
                throw new IllegalStateException("not a click: " + line);
            }
            out.add(new Click(Long.parseLong(m.group(1)), m.group(2), m.group(3)));
        }
        return out;
    }

    /** The distinct users per page of {@code clicks}. */
    static Map<String, Set<String>> usersPerPage(List<Click> clicks) {
        Map<String, Set<String>> out = new HashMap<>();
        for (Click c : clicks) {
            out.computeIfAbsent(c.page(), k -> new HashSet<>()).add(c.user());
        }
        return out;
    }

    /** The committed truth: distinct users per page. */
    static Map<String, Long> truth() throws IOException {
        Map<String, Long> out = new HashMap<>();
        List<String> lines = Files.readAllLines(testdata().resolve("count/clicks.truth.csv"));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            out.put(f[0], Long.parseLong(f[1]));
        }
        return out;
    }

    /**
     * Runs a bounded query and applies its changelog: the final rows by their first {@code
     * keyFields} fields.
     */
    static Map<List<Object>, Row> finalRows(TableResult result, int keyFields) throws Exception {
        Map<List<Object>, Row> rows = new HashMap<>();
        try (CloseableIterator<Row> it = result.collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                List<Object> key = new ArrayList<>();
                for (int i = 0; i < keyFields; i++) {
                    key.add(r.getField(i));
                }
                if (r.getKind() == RowKind.INSERT || r.getKind() == RowKind.UPDATE_AFTER) {
                    rows.put(key, r);
                } else {
                    rows.remove(key);
                }
            }
        }
        return rows;
    }
}
