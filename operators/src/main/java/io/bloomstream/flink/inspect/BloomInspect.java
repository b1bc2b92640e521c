package io.bloomstream.flink.inspect;

import io.bloomstream.filter.Estimate;
import io.bloomstream.flink.count.BloomCount;
import io.bloomstream.flink.count.CountFunction;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupFunction;
import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.flink.internal.ShapeRecord;
import io.bloomstream.flink.screen.BloomScreen;
import io.bloomstream.flink.screen.ScreenFunction;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.runtime.SavepointLoader;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * Reads what bloomstream's operators hold in a savepoint or retained checkpoint, offline, with
 * Flink's State Processor API: {@link #dedup} and {@link #count} give a {@link FilterReport},
 * {@link #screen} a {@link ScreenReport}. Each read runs a small job on {@code env} (a local
 * environment in batch mode is what the State Processor API expects).
 *
 * <p>A savepoint in Flink's canonical format (the default) reads with either backend; a native
 * savepoint or a retained checkpoint only with the backend that wrote it.
 *
 * <p>The keyed states are read with the operator's own serializers, and a key type that is not the
 * job's is refused by Flink (the key serializer does not match): a per-key operator needs its key's
 * {@link TypeInformation}; a global one (keyed by shard) is read with {@code Types.INT}.
 *
 * <p>Not readable here: a SQL {@code BLOOM_DEDUP}'s state. Its operator has no uid unless the
 * planner was told to generate them ({@code table.exec.uid.generation}), and its keys are the
 * planner's rows of the {@code PARTITION BY} columns (docs/state.md).
 */
@PublicEvolving
public final class BloomInspect {

    /** How many of the fullest keys a {@link FilterReport} lists. */
    public static final int FULLEST_KEYS = 5;

    private BloomInspect() {}

    /**
     * Whether the savepoint at {@code path} holds state of the operator with {@code uid}.
     *
     * @throws IOException if {@code path} is not a readable savepoint or checkpoint
     */
    public static boolean holds(String path, String uid) throws IOException {
        return operatorState(path, uid) != null;
    }

    /** The uids among bloomstream's defaults whose operators hold state in the savepoint. */
    public static List<String> defaultUids(String path) throws IOException {
        java.util.Set<OperatorID> held = new java.util.HashSet<>();
        for (OperatorState s : SavepointLoader.loadSavepointMetadata(path).getOperatorStates()) {
            held.add(s.getOperatorID());
        }
        List<String> found = new ArrayList<>();
        for (String uid :
                List.of(BloomDedup.DEFAULT_UID, BloomCount.DEFAULT_UID, BloomScreen.DEFAULT_UID)) {
            if (held.contains(OperatorIdentifier.forUid(uid).getOperatorId())) {
                found.add(uid);
            }
        }
        return found;
    }

    /**
     * A dedup operator's filters.
     *
     * @param keyType the key's type; null: read from the shape, a global dedup's shard ({@code
     *     Types.INT}); a per-key dedup then needs it
     * @throws IllegalArgumentException if the savepoint has no state under {@code uid}, or a
     *     per-key dedup's key type is not given
     */
    public static FilterReport dedup(
            StreamExecutionEnvironment env,
            String path,
            StateBackend backend,
            String uid,
            TypeInformation<?> keyType)
            throws Exception {
        OperatorState state = require(path, uid, "dedup");
        SavepointReader reader = SavepointReader.read(env, path, backend);
        Map<String, String> shape = shape(reader, uid, DedupFunction.SHAPE_STATE);
        TypeInformation<?> key = keyType;
        if (key == null) {
            String shards = shape.get("shards");
            if (shards == null || !shards.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException(
                        "the dedup under uid '"
                                + uid
                                + "' is per key (shards: "
                                + shards
                                + "): give its key type");
            }
            key = Types.INT;
        }
        List<Tuple2<String, long[]>> rows =
                rows(reader, uid, key, DedupFunction.META_STATE, DedupFunction.PAGES_STATE);
        boolean exact =
                Boolean.parseBoolean(shape.getOrDefault("exactEntries", "false"))
                        || Boolean.parseBoolean(shape.getOrDefault("exact", "false"));
        return report("dedup", uid, shape, rows, state.getStateSize(), exact);
    }

    /**
     * A count operator's filters.
     *
     * @param keyType the key's type: {@code Types.INT} for a global count (keyed by shard)
     * @throws IllegalArgumentException if the savepoint has no state under {@code uid}
     */
    public static FilterReport count(
            StreamExecutionEnvironment env,
            String path,
            StateBackend backend,
            String uid,
            TypeInformation<?> keyType)
            throws Exception {
        Objects.requireNonNull(keyType, "keyType");
        OperatorState state = require(path, uid, "count");
        SavepointReader reader = SavepointReader.read(env, path, backend);
        Map<String, String> shape = shape(reader, uid, CountFunction.SHAPE_STATE);
        List<Tuple2<String, long[]>> rows =
                rows(reader, uid, keyType, CountFunction.META_STATE, CountFunction.PAGES_STATE);
        return report("count", uid, shape, rows, state.getStateSize(), false);
    }

    /**
     * A screen operator's file in force and live overlay.
     *
     * @throws IllegalArgumentException if the savepoint has no state under {@code uid}
     */
    public static ScreenReport screen(
            StreamExecutionEnvironment env, String path, StateBackend backend, String uid)
            throws Exception {
        OperatorState state = require(path, uid, "screen");
        SavepointReader reader = SavepointReader.read(env, path, backend);
        OperatorIdentifier id = OperatorIdentifier.forUid(uid);
        Map<String, String> filter =
                new java.util.TreeMap<>(
                        broadcast(reader, id, ScreenFunction.FILTER_STATE.getName(), Types.STRING));
        Map<String, Boolean> overlay =
                broadcast(reader, id, ScreenFunction.OVERLAY_STATE.getName(), Types.BOOLEAN);
        long added = overlay.values().stream().filter(b -> b).count();
        return new ScreenReport(uid, filter, added, overlay.size() - added, state.getStateSize());
    }

    /**
     * A broadcast state of string keys as a map: it is the same on every subtask, so each entry
     * counts once.
     */
    private static <V> Map<String, V> broadcast(
            SavepointReader reader, OperatorIdentifier id, String name, TypeInformation<V> type)
            throws Exception {
        Map<String, V> entries = new java.util.HashMap<>();
        for (Tuple2<String, V> kv :
                collect(reader.readBroadcastState(id, name, Types.STRING, type))) {
            entries.put(kv.f0, kv.f1);
        }
        return entries;
    }

    private static OperatorState operatorState(String path, String uid) throws IOException {
        OperatorID id = OperatorIdentifier.forUid(uid).getOperatorId();
        for (OperatorState s : SavepointLoader.loadSavepointMetadata(path).getOperatorStates()) {
            if (s.getOperatorID().equals(id)) {
                return s;
            }
        }
        return null;
    }

    private static OperatorState require(String path, String uid, String what) throws IOException {
        OperatorState s = operatorState(path, uid);
        if (s == null) {
            throw new IllegalArgumentException(
                    path + " holds no state of an operator with uid '" + uid + "' (" + what + ")");
        }
        return s;
    }

    private static Map<String, String> shape(SavepointReader reader, String uid, String name)
            throws Exception {
        for (String record :
                collect(
                        reader.readUnionState(
                                OperatorIdentifier.forUid(uid), name, Types.STRING))) {
            return ShapeRecord.decode(record);
        }
        return Map.of();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<Tuple2<String, long[]>> rows(
            SavepointReader reader,
            String uid,
            TypeInformation<?> keyType,
            String meta,
            String pages)
            throws Exception {
        return collect(
                reader.readKeyedState(
                        OperatorIdentifier.forUid(uid),
                        new FilterKeyReader(meta, pages),
                        (TypeInformation) keyType,
                        FilterKeyReader.ROW));
    }

    private static <T> List<T> collect(DataStream<T> stream) throws Exception {
        List<T> all = new ArrayList<>();
        try (CloseableIterator<T> it = stream.executeAndCollect("bloomstream inspect")) {
            it.forEachRemaining(all::add);
        }
        return all;
    }

    /** The report from the keys' rows ({@link FilterKeyReader}). */
    static FilterReport report(
            String kind,
            String uid,
            Map<String, String> shape,
            List<Tuple2<String, long[]>> rows,
            long stateBytes,
            boolean exact) {
        long pages = 0;
        long pageBytes = 0;
        long items = 0;
        double fillSum = 0;
        int maxStages = 0;
        int generations = 0;
        double worstLoad = -1;
        long[] worst = null;
        int worstAt = 0;
        List<Estimate> parts = new ArrayList<>();
        List<FilterReport.KeyFill> fills = new ArrayList<>();
        for (Tuple2<String, long[]> row : rows) {
            long[] r = row.f1;
            generations = Math.max(generations, (int) r[FilterKeyReader.GENERATIONS]);
            int stages = (r.length - 1) / FilterKeyReader.STAGE_FIELDS;
            double keyFill = 0;
            long keyItems = 0;
            int newestSlotStages = 0;
            long newestSlot = -1;
            for (int i = 0; i < stages; i++) {
                int at = 1 + i * FilterKeyReader.STAGE_FIELDS;
                long bits = r[at + FilterKeyReader.BITS];
                int hashes = (int) r[at + FilterKeyReader.HASHES];
                int pageBits = (int) r[at + FilterKeyReader.PAGE_BITS];
                long stageItems = r[at + FilterKeyReader.ITEMS];
                long set = r[at + FilterKeyReader.SET_BITS];
                pages += r[at + FilterKeyReader.PAGES];
                pageBytes += r[at + FilterKeyReader.BYTES];
                keyItems += stageItems;
                keyFill = Math.max(keyFill, (double) set / bits);
                parts.add(Estimate.of(set, bits, hashes, pageBits == 0 ? bits : pageBits));
                double load = (double) stageItems / bits;
                if (load > worstLoad) {
                    worstLoad = load;
                    worst = r;
                    worstAt = at;
                }
                if (r[at + FilterKeyReader.SLOT] != newestSlot) {
                    newestSlot = r[at + FilterKeyReader.SLOT];
                    newestSlotStages = 0;
                }
                maxStages = Math.max(maxStages, ++newestSlotStages);
            }
            items += keyItems;
            fillSum += keyFill;
            fills.add(new FilterReport.KeyFill(row.f0, keyFill, keyItems, stages));
        }
        fills.sort(
                Comparator.comparingDouble(FilterReport.KeyFill::fill)
                        .reversed()
                        .thenComparing(FilterReport.KeyFill::key));
        double fullestFill = 0;
        double fullestFpp = 0;
        if (worst != null) {
            long bits = worst[worstAt + FilterKeyReader.BITS];
            int hashes = (int) worst[worstAt + FilterKeyReader.HASHES];
            long stageItems = worst[worstAt + FilterKeyReader.ITEMS];
            int pageBits = (int) worst[worstAt + FilterKeyReader.PAGE_BITS];
            fullestFill = DedupMetrics.expectedFill(stageItems, bits, hashes);
            fullestFpp = DedupMetrics.expectedFpp(stageItems, bits, hashes, pageBits);
        }
        String fpp = shape.get("fpp");
        return new FilterReport(
                kind,
                uid,
                shape,
                rows.size(),
                pages,
                pageBytes,
                stateBytes,
                rows.isEmpty() ? 0 : fillSum / rows.size(),
                List.copyOf(fills.subList(0, Math.min(FULLEST_KEYS, fills.size()))),
                items,
                Estimate.sum(parts),
                fullestFill,
                fullestFpp,
                fpp == null ? Double.NaN : Double.parseDouble(fpp),
                maxStages,
                generations,
                exact ? items : -1);
    }
}
