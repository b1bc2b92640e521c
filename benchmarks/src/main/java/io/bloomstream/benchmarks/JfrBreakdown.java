package io.bloomstream.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a task thread's time goes in a JFR recording of {@link SqlBenchmark}: the execution samples
 * ({@code jdk.ExecutionSample}, Java code) and native samples ({@code jdk.NativeMethodSample}, for
 * RocksDB's JNI calls) of the busiest thread whose name matches a pattern, by category (each sample
 * counted once, in the first {@link #CATEGORIES category} whose frames it has), then the top frames
 * by self and by total samples.
 *
 * <p>The two kinds are reported apart: JFR samples Java and native threads at different periods (10
 * ms and 20 ms under {@code settings=profile}) and a bounded number of threads per period, so their
 * counts do not add up to one time.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.JfrBreakdown
 * recording.jfr 'ProcessTableFunction|Deduplicate' [top]}.
 */
public final class JfrBreakdown {

    /**
     * Categories in order: a sample goes to the first whose every pattern matches one of its frames
     * ("!" before a pattern: no frame may match it).
     */
    static final Map<String, List<String>> CATEGORIES = new LinkedHashMap<>();

    static {
        CATEGORIES.put(
                "PTF: declared row state (bloom_meta): read, convert, compare, write back",
                List.of("ProcessTableRunner\\.moveState(To|From)Function"));
        CATEGORIES.put(
                "output: collect -> Calc -> sink (the harness's chain, same for both)",
                List.of(
                        "ProcessTableFunction\\.collect$|StreamRecordCollector\\.collect"
                                + "|TimestampedCollector\\.collect"));
        CATEGORIES.put(
                "PTF: input row and argument conversion around eval",
                List.of("callEval$", "!DedupTableFunction\\.eval"));
        CATEGORIES.put(
                "ours -> MapView state: TTL incremental cleanup",
                List.of("DedupTableFunction\\.eval", "TtlIncrementalCleanup"));
        CATEGORIES.put(
                "ours -> MapView state: get/put (backend, TTL wrapper, serializers)",
                List.of(
                        "DedupTableFunction\\.eval",
                        "StateMapView|UserFacingMapState|TtlMapState|RocksDB"));
        CATEGORIES.put(
                "ours: judge (hash, probe, insert, page and metadata bytes)",
                List.of("FilterJudge\\.judge|FilterJudge\\.addIfAbsent"));
        CATEGORIES.put(
                "ours: read cache lookup, partition key, rest of eval",
                List.of("DedupTableFunction\\.(eval|judge)"));
        CATEGORIES.put(
                "ROW_NUMBER: finishBundle, state value/update",
                List.of("finishBundle", "ValueState|StateTable|RocksDB|Ttl"));
        CATEGORIES.put("ROW_NUMBER: finishBundle, the rest", List.of("finishBundle"));
        CATEGORIES.put(
                "ROW_NUMBER: bundle add (map put, row copy)",
                List.of("BundleOperator\\.processElement"));
        CATEGORIES.put(
                "operator: key extraction, set current key",
                List.of("setKeyContextElement|setCurrentKey|KeySelector"));
        CATEGORIES.put(
                "PTF operator and runner, the rest",
                List.of("ProcessSetTableOperator|ProcessTableRunner"));
        CATEGORIES.put(
                "network input, deserialization",
                List.of("emitNext|StreamTaskNetworkInput|RecordDeserializer"));
        CATEGORIES.put("checkpoint, snapshot", List.of("(?i)snapshot|checkpoint"));
    }

    private static final String[] KINDS = {"jdk.ExecutionSample", "jdk.NativeMethodSample"};

    private JfrBreakdown() {}

    /** One sample: its kind, its thread, its frames from the top (class.method). */
    record Sample(String kind, String thread, List<String> frames, boolean truncated) {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            throw new IllegalArgumentException(
                    "usage: JfrBreakdown recording.jfr thread-regex [top]; got " + args.length);
        }
        List<Sample> all = read(Path.of(args[0]));
        Pattern thread = Pattern.compile(args[1]);
        int top = args.length > 2 ? Integer.parseInt(args[2]) : 15;
        Map<String, Integer> perThread = new HashMap<>();
        for (Sample s : all) {
            if (s.thread() != null && thread.matcher(s.thread()).find()) {
                perThread.merge(s.thread(), 1, Integer::sum);
            }
        }
        String target =
                perThread.entrySet().stream()
                        .max(Map.Entry.comparingByValue())
                        .map(Map.Entry::getKey)
                        .orElseThrow(
                                () -> new IllegalArgumentException("no thread matches " + args[1]));
        System.out.println("thread: " + target);
        for (String kind : KINDS) {
            List<Sample> mine =
                    all.stream()
                            .filter(s -> target.equals(s.thread()) && kind.equals(s.kind()))
                            .collect(Collectors.toList());
            System.out.printf(
                    Locale.ROOT,
                    "%n## %s: %d samples (%d stacks truncated at the recording's depth)%n",
                    kind,
                    mine.size(),
                    mine.stream().filter(Sample::truncated).count());
            if (mine.isEmpty()) {
                continue;
            }
            print(categorize(mine), mine.size(), 20);
            Map<String, Integer> self = new HashMap<>();
            Map<String, Integer> total = new HashMap<>();
            for (Sample s : mine) {
                if (!s.frames().isEmpty()) {
                    self.merge(s.frames().get(0), 1, Integer::sum);
                }
                for (String f : new HashSet<>(s.frames())) {
                    total.merge(f, 1, Integer::sum);
                }
            }
            System.out.println("-- self");
            print(self, mine.size(), top);
            System.out.println("-- total");
            print(total, mine.size(), top * 3);
        }
    }

    /** Samples per category (see {@link #CATEGORIES}); "other" for the rest. */
    static Map<String, Integer> categorize(List<Sample> samples) {
        Map<String, List<Pattern>> compiled = new LinkedHashMap<>();
        CATEGORIES.forEach(
                (name, patterns) ->
                        compiled.put(
                                name,
                                patterns.stream()
                                        .map(p -> Pattern.compile(p.replaceFirst("^!", "")))
                                        .collect(Collectors.toList())));
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (Sample s : samples) {
            String category = "other (mailbox, JIT, safepoints)";
            for (Map.Entry<String, List<String>> c : CATEGORIES.entrySet()) {
                List<Pattern> ps = compiled.get(c.getKey());
                boolean all = true;
                for (int i = 0; i < ps.size() && all; i++) {
                    boolean negated = c.getValue().get(i).startsWith("!");
                    Pattern p = ps.get(i);
                    boolean any = s.frames().stream().anyMatch(f -> p.matcher(f).find());
                    all = negated != any;
                }
                if (all) {
                    category = c.getKey();
                    break;
                }
            }
            counts.merge(category, 1, Integer::sum);
        }
        return counts;
    }

    private static void print(Map<String, Integer> counts, int n, int limit) {
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(limit)
                .forEach(
                        e ->
                                System.out.printf(
                                        Locale.ROOT,
                                        "%5.1f%% %6d  %s%n",
                                        100.0 * e.getValue() / n,
                                        e.getValue(),
                                        e.getKey()));
    }

    private static List<Sample> read(Path file) throws IOException {
        Set<String> kinds = Set.of(KINDS);
        List<Sample> samples = new ArrayList<>();
        try (RecordingFile recording = new RecordingFile(file)) {
            while (recording.hasMoreEvents()) {
                RecordedEvent e = recording.readEvent();
                String kind = e.getEventType().getName();
                if (!kinds.contains(kind) || e.getStackTrace() == null) {
                    continue;
                }
                String thread =
                        e.getThread("sampledThread") == null
                                ? null
                                : e.getThread("sampledThread").getJavaName();
                List<String> frames = new ArrayList<>();
                for (RecordedFrame f : e.getStackTrace().getFrames()) {
                    frames.add(f.getMethod().getType().getName() + "." + f.getMethod().getName());
                }
                samples.add(new Sample(kind, thread, frames, e.getStackTrace().isTruncated()));
            }
        }
        return samples;
    }
}
