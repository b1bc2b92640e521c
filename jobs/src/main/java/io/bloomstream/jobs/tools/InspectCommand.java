package io.bloomstream.jobs.tools;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.CountingBloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.filter.Sizing;
import io.bloomstream.jobs.console.Logs;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code inspect}: what a filter file holds, or what bloomstream's operators hold in a savepoint, a
 * retained checkpoint or a command's state directory ({@link SavepointInspection}).
 */
@Command(
        name = "inspect",
        mixinStandardHelpOptions = true,
        description = {
            "Prints a filter file's header, bits set, fill ratio, estimated items and current"
                    + " expected false-positive rate;",
            "or, for a savepoint, retained checkpoint or --state-dir, each bloomstream operator's"
                    + " keys, pages, fill, estimated distinct items, false-positive rate against"
                    + " its target, cascade stages, generations and exact entries."
        })
public final class InspectCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    /** What to inspect: one of three. */
    static final class Target {
        @Option(names = "--filter", paramLabel = "FILTER", description = "A filter file.")
        Path filter;

        @Option(
                names = "--savepoint",
                paramLabel = "PATH",
                description =
                        "A savepoint or retained checkpoint (the directory holding _metadata).")
        String savepoint;

        @Option(
                names = "--state-dir",
                paramLabel = "DIR",
                description = "A command's state directory: its newest savepoint or checkpoint.")
        Path stateDir;
    }

    @CommandLine.ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Option(
            names = "--uid",
            paramLabel = "UID",
            description =
                    "Savepoints: the operator's uid (repeatable); default: bloomstream's default"
                            + " uids found (bloom-dedup, bloom-count, bloom-screen).")
    List<String> uids = new ArrayList<>();

    @Option(
            names = "--kind",
            paramLabel = "KIND",
            description =
                    "Savepoints: what --uid is, dedup, count or screen (default: by the uid's"
                            + " name, else dedup).")
    String kind;

    @Option(
            names = "--key-type",
            paramLabel = "TYPE",
            description =
                    "Savepoints: a per-key operator's key type, ${COMPLETION-CANDIDATES}"
                            + " (default STRING, the commands' key; a global operator's shard is"
                            + " read as INT).")
    SavepointInspection.KeyType keyType;

    @Option(
            names = "--state-backend",
            paramLabel = "BACKEND",
            description =
                    "Savepoints: hashmap or rocksdb, the backend to read with (default: hashmap,"
                            + " then rocksdb; a retained RocksDB checkpoint reads only with"
                            + " rocksdb).")
    String backend;

    @CommandLine.Mixin KeyOptions key;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (target.filter == null) {
            return savepoint();
        }
        Path filter = target.filter;
        FilterFile file = FilterFiles.read(filter, key.hasher(spec.commandLine()));
        MembershipFilter f = file.filter();
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("file", filter.toString());
        info.put("bytes", Files.size(filter));
        info.put(
                "type",
                f instanceof BloomFilter
                        ? "bloom"
                        : f instanceof CountingBloomFilter ? "counting" : "scalable");
        info.put("strategy", f.hasher().strategy().name());
        info.put(
                f.hasher().strategy().isKeyed() ? "key_check" : "seed",
                String.format("0x%016x", f.hasher().seed()));
        info.put(
                "normalization",
                file.normalization() == null ? "not recorded" : file.normalization().toString());
        FilterSpec s = null;
        if (f instanceof BloomFilter) {
            s = ((BloomFilter) f).spec();
        } else if (f instanceof CountingBloomFilter) {
            s = ((CountingBloomFilter) f).spec();
        } else {
            ScalableBloomFilter c = (ScalableBloomFilter) f;
            info.put("stages", c.stages().size());
            info.put("initial_capacity", c.initialCapacity());
            info.put("target_fpp", c.fpp());
            info.put("bits", c.bits());
        }
        if (s != null) {
            info.put("bits", s.bits());
            info.put("hashes", s.hashes());
            info.put("layout", s.isClassic() ? "classic" : s.pageBits() + "-bit pages");
        }
        Estimate e = f.estimate();
        info.put("items_added", f.itemsAdded());
        info.put(f instanceof CountingBloomFilter ? "counters_set" : "bits_set", e.setCells());
        info.put("fill_ratio", e.fillRatio());
        info.put(
                "estimated_items",
                e.saturated()
                        ? "saturated"
                        : e.valid() ? (Object) Math.round(e.estimate()) : "unreliable");
        info.put("estimate_standard_error", e.standardError());
        info.put("expected_fpp", f.expectedFpp());
        if (s != null) {
            // the layout's model rate above, and the textbook rate of the same m and k
            info.put(
                    "classic_layout_fpp",
                    Sizing.falsePositiveRate(s.bits(), s.hashes(), f.itemsAdded()));
        }
        if (f instanceof BloomFilter) {
            info.put("current_fpp", ((BloomFilter) f).currentFpp());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            try (JsonGenerator g =
                    new JsonFactory()
                            .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                            .createGenerator(out)) {
                g.writeStartObject();
                for (Map.Entry<String, Object> kv : info.entrySet()) {
                    Object v = kv.getValue();
                    if (v instanceof Number && !(v instanceof Double)) {
                        g.writeNumberField(kv.getKey(), ((Number) v).longValue());
                    } else if (v instanceof Double) {
                        g.writeNumberField(kv.getKey(), (Double) v);
                    } else {
                        g.writeStringField(kv.getKey(), v.toString());
                    }
                }
                g.writeEndObject();
            }
            out.println();
        } else {
            for (Map.Entry<String, Object> kv : info.entrySet()) {
                Object v = kv.getValue();
                String text =
                        v instanceof Double
                                ? String.format(Locale.ROOT, "%.6g", (Double) v)
                                : v.toString();
                out.printf(Locale.ROOT, "%-24s %s%n", kv.getKey().replace('_', ' '), text);
            }
        }
        out.flush();
        return 0;
    }

    private Integer savepoint() throws Exception {
        if (kind != null && !List.of("dedup", "count", "screen").contains(kind)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--kind must be dedup, count or screen, was " + kind);
        }
        if (backend != null && !List.of("hashmap", "rocksdb").contains(backend)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--state-backend must be hashmap or rocksdb, was " + backend);
        }
        String path;
        Map<String, Object> reports;
        try {
            path =
                    target.savepoint != null
                            ? target.savepoint
                            : SavepointInspection.latest(target.stateDir);
            SavepointInspection.requireSavepoint(
                    target.savepoint != null ? "--savepoint" : "--state-dir", path);
            Logs.configure("inspect", false, null);
            reports = new SavepointInspection(path, uids, keyType, backend, kind).read();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            try (JsonGenerator g =
                    new JsonFactory()
                            .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                            .createGenerator(out)) {
                SavepointInspection.json(g, path, reports);
            }
            out.println();
        } else {
            SavepointInspection.text(out, path, reports);
        }
        out.flush();
        return 0;
    }
}
