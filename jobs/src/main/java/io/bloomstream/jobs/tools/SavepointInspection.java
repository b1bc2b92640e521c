package io.bloomstream.jobs.tools;

import com.fasterxml.jackson.core.JsonGenerator;
import io.bloomstream.filter.Estimate;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.inspect.BloomInspect;
import io.bloomstream.flink.inspect.FilterReport;
import io.bloomstream.flink.inspect.ScreenReport;
import io.bloomstream.jobs.console.Bytes;
import io.bloomstream.jobs.console.JobFailedException;
import io.bloomstream.jobs.io.StateDir;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * {@code inspect --savepoint PATH | --state-dir DIR}: bloomstream's operators in a savepoint or
 * retained checkpoint ({@link BloomInspect}), as text or one JSON object.
 */
public final class SavepointInspection {

    /** The key types {@code --key-type} names. */
    enum KeyType {
        STRING(Types.STRING),
        INT(Types.INT),
        LONG(Types.LONG);

        final TypeInformation<?> type;

        KeyType(TypeInformation<?> type) {
            this.type = type;
        }
    }

    private final String path;
    private final List<String> uids;
    private final KeyType keyType;
    private final String backend;
    private final String kind;

    /**
     * @param uids the uids to read; empty: bloomstream's default uids found in the savepoint
     * @param keyType a per-key operator's key type (null: the commands' STRING, or a global
     *     operator's shard)
     * @param backend "hashmap", "rocksdb", or null to try the first, then the second (a retained
     *     checkpoint of RocksDB reads only with RocksDB)
     * @param kind "dedup", "count" or "screen"; null: by the uid ({@link #kindOf})
     */
    SavepointInspection(
            String path, List<String> uids, KeyType keyType, String backend, String kind) {
        this.path = path;
        this.uids = uids;
        this.keyType = keyType;
        this.backend = backend;
        this.kind = kind;
    }

    /**
     * The newest savepoint or retained checkpoint of a command's state directory.
     *
     * @throws IllegalArgumentException if it holds none
     */
    static String latest(Path stateDir) throws IOException {
        if (!Files.isDirectory(stateDir)) {
            throw new IllegalArgumentException("--state-dir " + stateDir + ": no such directory");
        }
        return StateDir.at(stateDir)
                .latest()
                .orElseThrow(
                        () ->
                                new IllegalArgumentException(
                                        "--state-dir "
                                                + stateDir
                                                + " holds no savepoint or checkpoint yet"))
                .toString();
    }

    /**
     * The local directory of a savepoint path as a user gives it: a plain path, or a {@code file:}
     * URI as Flink prints savepoint paths.
     */
    public static Path localDir(String path) {
        return path.startsWith("file:")
                ? Path.of(new org.apache.flink.core.fs.Path(path).toUri().getPath())
                : Path.of(path);
    }

    /**
     * Refuses a path that is no savepoint or checkpoint (without a {@code _metadata} file).
     *
     * @throws IllegalArgumentException naming {@code flag} and the path
     */
    public static void requireSavepoint(String flag, String path) {
        if (!Files.isRegularFile(localDir(path).resolve("_metadata"))) {
            throw new IllegalArgumentException(
                    flag
                            + " "
                            + path
                            + " is not a savepoint or checkpoint: it has no _metadata file");
        }
    }

    /** What each operator holds: a {@link FilterReport} or a {@link ScreenReport} per uid. */
    Map<String, Object> read() throws Exception {
        List<String> wanted = uids.isEmpty() ? BloomInspect.defaultUids(path) : uids;
        if (wanted.isEmpty()) {
            throw new IllegalArgumentException(
                    path
                            + " holds no operator under bloomstream's default uids ("
                            + String.join(", ", defaultUids())
                            + "); name yours with --uid");
        }
        Map<String, Object> reports = new LinkedHashMap<>();
        for (String uid : wanted) {
            reports.put(uid, readOne(uid));
        }
        return reports;
    }

    private static List<String> defaultUids() {
        return List.of(BloomDedup.DEFAULT_UID, BloomCount.DEFAULT_UID, "bloom-screen");
    }

    private Object readOne(String uid) throws Exception {
        Exception first = null;
        for (StateBackend b : backends()) {
            try {
                return readWith(uid, b);
            } catch (IllegalArgumentException refused) {
                throw refused;
            } catch (Exception e) {
                String cause = JobFailedException.rootCause(e);
                if (cause.contains("key serializer")) {
                    throw new IllegalArgumentException(
                            "the keys of uid '"
                                    + uid
                                    + "' are not "
                                    + (keyType == null ? "STRING" : keyType)
                                    + " (Flink refused the key serializer): give their type with"
                                    + " --key-type STRING, INT or LONG");
                }
                if (first == null) {
                    first = e;
                }
            }
        }
        throw JobFailedException.of(
                "could not read uid '"
                        + uid
                        + "' of "
                        + path
                        + ": "
                        + JobFailedException.rootCause(first),
                first,
                null);
    }

    private List<StateBackend> backends() {
        if ("hashmap".equals(backend)) {
            return List.of(new HashMapStateBackend());
        }
        if ("rocksdb".equals(backend)) {
            return List.of(new EmbeddedRocksDBStateBackend());
        }
        return List.of(new HashMapStateBackend(), new EmbeddedRocksDBStateBackend());
    }

    private Object readWith(String uid, StateBackend b) throws Exception {
        String kind = this.kind != null ? this.kind : kindOf(uid);
        if (kind.equals("screen")) {
            return BloomInspect.screen(env(), path, b, uid);
        }
        if (kind.equals("count")) {
            return count(uid, b);
        }
        try {
            return BloomInspect.dedup(env(), path, b, uid, dedupKey());
        } catch (IllegalArgumentException perKey) {
            if (keyType == null && perKey.getMessage().contains("per key")) {
                return BloomInspect.dedup(env(), path, b, uid, Types.STRING);
            }
            throw perKey;
        }
    }

    private TypeInformation<?> dedupKey() {
        return keyType == null ? null : keyType.type;
    }

    /** A count: its key type as given, else a global count's shard, else the commands' string. */
    private Object count(String uid, StateBackend b) throws Exception {
        if (keyType != null) {
            return BloomInspect.count(env(), path, b, uid, keyType.type);
        }
        try {
            return BloomInspect.count(env(), path, b, uid, Types.INT);
        } catch (Exception notShards) {
            return BloomInspect.count(env(), path, b, uid, Types.STRING);
        }
    }

    /** The kind of operator a uid names when {@code --kind} is not given: by its default uid. */
    static String kindOf(String uid) {
        if (uid.contains("screen")) {
            return "screen";
        }
        return uid.contains("count") ? "count" : "dedup";
    }

    private static StreamExecutionEnvironment env() {
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    /** Prints {@code reports} as text, an operator a block. */
    static void text(PrintWriter out, String path, Map<String, Object> reports) {
        line(out, "savepoint", path);
        for (Object r : reports.values()) {
            out.println();
            fields(r).forEach((k, v) -> line(out, k, v));
        }
    }

    /** Prints {@code reports} as one JSON object: the path and an array of operators. */
    static void json(JsonGenerator g, String path, Map<String, Object> reports) throws IOException {
        g.writeStartObject();
        g.writeStringField("savepoint", path);
        g.writeArrayFieldStart("operators");
        for (Object r : reports.values()) {
            g.writeStartObject();
            for (Map.Entry<String, Object> kv : json(r).entrySet()) {
                g.writeFieldName(kv.getKey());
                write(g, kv.getValue());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void write(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof Double d) {
            if (d.isNaN()) {
                g.writeNull();
            } else {
                g.writeNumber(d);
            }
        } else if (v instanceof Number n) {
            g.writeNumber(n.longValue());
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof Map<?, ?> m) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                g.writeFieldName(String.valueOf(e.getKey()));
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (v instanceof List<?> l) {
            g.writeStartArray();
            for (Object o : l) {
                write(g, o);
            }
            g.writeEndArray();
        } else {
            g.writeString(v.toString());
        }
    }

    /** A report's JSON fields: its figures by name, numbers as numbers. */
    static Map<String, Object> json(Object report) {
        Map<String, Object> f = new LinkedHashMap<>();
        if (report instanceof ScreenReport s) {
            f.put("uid", s.uid());
            f.put("kind", "screen");
            f.put("filter", s.filter());
            f.put("overlay_added", s.overlayAdded());
            f.put("overlay_removed", s.overlayRemoved());
            f.put("state_bytes", s.stateBytes());
            return f;
        }
        FilterReport r = (FilterReport) report;
        f.put("uid", r.uid());
        f.put("kind", r.kind());
        f.put("shape", r.shape());
        f.put("keys", r.keys());
        f.put("pages", r.pages());
        f.put("page_bytes", r.pageBytes());
        f.put("state_bytes", r.stateBytes());
        f.put("mean_fill", r.meanFill());
        List<Map<String, Object>> fullest = new ArrayList<>();
        for (FilterReport.KeyFill k : r.fullest()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("key", k.key());
            m.put("fill", k.fill());
            m.put("items", k.items());
            m.put("stages", k.stages());
            fullest.add(m);
        }
        f.put("fullest_keys", fullest);
        f.put("items_added", r.itemsAdded());
        Estimate e = r.estimate();
        f.put("estimated_distinct", e.estimate());
        f.put("estimate_standard_error", e.standardError());
        f.put("fullest_stage_fill", r.fullestStageFill());
        f.put("fullest_stage_fpp", r.fullestStageFpp());
        f.put("target_fpp", r.targetFpp());
        f.put("over_target", r.overTarget());
        f.put("cascade_stages", r.maxStages());
        f.put("generations", r.generations());
        f.put("exact_entries", r.exactEntries() < 0 ? null : r.exactEntries());
        return f;
    }

    /** A report's text lines, label to value. */
    static Map<String, String> fields(Object report) {
        Map<String, String> f = new LinkedHashMap<>();
        if (report instanceof ScreenReport s) {
            f.put("operator", s.uid() + " (screen)");
            f.put("filter in force", s.filter().getOrDefault("path", "(none loaded)"));
            f.put("filter version", s.filter().getOrDefault("version", "-"));
            f.put("overlay", s.overlayAdded() + " added, " + s.overlayRemoved() + " removed");
            f.put("state bytes", String.format(Locale.ROOT, "%,d", s.stateBytes()));
            return f;
        }
        FilterReport r = (FilterReport) report;
        String shards = r.shape().get("shards");
        boolean global = shards != null && shards.chars().allMatch(Character::isDigit);
        f.put(
                "operator",
                r.uid()
                        + " ("
                        + r.kind()
                        + (r.kind().equals("dedup")
                                ? global ? ", global: " + shards + " shards" : ", per key"
                                : "")
                        + (r.exactEntries() >= 0 ? ", exact mode" : "")
                        + ")");
        f.put(global ? "shards holding ids" : "keys", String.format(Locale.ROOT, "%,d", r.keys()));
        f.put("pages", String.format(Locale.ROOT, "%,d (%s)", r.pages(), mib(r.pageBytes())));
        f.put(
                "state bytes",
                String.format(
                        Locale.ROOT,
                        "%,d (the operator's whole state in the savepoint)",
                        r.stateBytes()));
        StringBuilder fill =
                new StringBuilder(String.format(Locale.ROOT, "mean %.3g", r.meanFill()));
        if (!r.fullest().isEmpty()) {
            fill.append("; fullest keys:");
            for (FilterReport.KeyFill k : r.fullest()) {
                fill.append(String.format(Locale.ROOT, " %s %.3g", k.key(), k.fill()));
            }
        }
        f.put("fill (set bits)", fill.toString());
        f.put("items added", String.format(Locale.ROOT, "%,d", r.itemsAdded()));
        Estimate e = r.estimate();
        f.put(
                "estimated distinct",
                String.format(
                        Locale.ROOT,
                        "%,.0f ± %,.2g (one standard error, from the set bits)",
                        e.estimate(),
                        e.standardError()));
        f.put(
                "false-positive rate",
                String.format(
                        Locale.ROOT,
                        "%.3g at the fullest stage (fill %.3g), target %s%s",
                        r.fullestStageFpp(),
                        r.fullestStageFill(),
                        Double.isNaN(r.targetFpp())
                                ? "not recorded"
                                : String.format(Locale.ROOT, "%.3g", r.targetFpp()),
                        r.overTarget() ? ": OVER THE TARGET" : ""));
        f.put("cascade stages", String.valueOf(r.maxStages()));
        f.put("generations", String.valueOf(r.generations()));
        if (r.exactEntries() >= 0) {
            f.put(
                    "exact entries",
                    String.format(
                            Locale.ROOT,
                            "%,d (about %s: the state beyond the pages)",
                            r.exactEntries(),
                            mib(r.stateBytes() - r.pageBytes())));
        }
        return f;
    }

    private static String mib(long bytes) {
        return Bytes.human(bytes);
    }

    private static void line(PrintWriter out, String label, String value) {
        out.printf(Locale.ROOT, "%-24s %s%n", label, value);
    }
}
