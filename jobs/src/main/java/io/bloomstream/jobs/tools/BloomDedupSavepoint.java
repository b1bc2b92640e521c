package io.bloomstream.jobs.tools;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.state.api.runtime.SavepointLoader;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

/**
 * Reads the ids of a {@code BLOOM_DEDUP(..., exact => TRUE)} query's savepoint: exact mode keeps
 * each id beside the filter ({@code MapView<STRING, BOOLEAN>} {@value #EXACT_STATE}, and {@value
 * #EXACT_OLD_STATE} of SQL dedup layout 5 for keys not yet moved), under a map key that is the
 * generation slot as one char then the id's exact key, which for a {@code STRING} id is the id
 * itself (exact entries format 1). An id is emitted once per partition key (shard) that holds it,
 * whatever slots hold it.
 *
 * <p>Without exact mode there is nothing to read: a Bloom filter keeps no ids, and the exact
 * entries are declared but empty, so the stream is empty (a caller should say so: it cannot tell a
 * query without exact mode from one that saw no ids). The operator is the one with {@value
 * #EXACT_STATE} (by default the single one), or the one of the query's {@code uid}. Limits: string
 * ids only (the exact key of a BYTES or numeric id is not the id); a canonical savepoint; under a
 * {@code retention}, ids of a generation that expired but was not yet freed are read too.
 */
public final class BloomDedupSavepoint {

    /** The exact entries of SQL dedup layout 6. */
    public static final String EXACT_STATE = "bloom_exact_v6";

    /** The exact entries of SQL dedup layout 5. */
    public static final String EXACT_OLD_STATE = "bloom_exact";

    private BloomDedupSavepoint() {}

    /**
     * The ids in the exact entries of the {@code BLOOM_DEDUP} in the savepoint at {@code path}:
     * that of the query's {@code uid}, or, if {@code uid} is null, the one operator with exact
     * entries.
     *
     * @throws IllegalArgumentException if there is no such operator, or (without uid) several
     */
    public static DataStream<String> readIds(
            StreamExecutionEnvironment env, String path, String uid) throws IOException {
        List<OperatorState> found = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        for (OperatorState op : SavepointLoader.loadSavepointMetadata(path).getOperatorStates()) {
            if (uid != null && !uid.equals(op.getOperatorUid().orElse(null))) {
                continue;
            }
            Optional<KeyedStateMeta> meta = KeyedStateMeta.of(op);
            if (meta.isPresent() && meta.get().states().containsKey(EXACT_STATE)) {
                found.add(op);
                seen.add(op.getOperatorID() + " (" + op.getOperatorName().orElse("unnamed") + ")");
            }
        }
        if (found.size() != 1) {
            throw new IllegalArgumentException(
                    path
                            + " has "
                            + found.size()
                            + " BLOOM_DEDUP operators with exact entries"
                            + (uid == null ? "" : " of uid " + uid)
                            + (found.isEmpty()
                                    ? " (no BLOOM_DEDUP" + (uid == null ? "" : " of that uid") + ")"
                                    : ": " + seen + "; give the query's uid"));
        }
        OperatorState op = found.get(0);
        KeyedStateMeta meta = KeyedStateMeta.of(op).orElseThrow();
        List<String> names = new ArrayList<>();
        List<MapSerializer<Object, Object>> maps = new ArrayList<>();
        for (String name : List.of(EXACT_STATE, EXACT_OLD_STATE)) {
            StateMetaInfoSnapshot state = meta.states().get(name);
            if (state != null) {
                names.add(name);
                maps.add(mapSerializer(state));
            }
        }
        @SuppressWarnings("unchecked")
        TypeSerializer<Object> key =
                (TypeSerializer<Object>) meta.keySerializer().restoreSerializer();
        return SavepointReader.read(env, path, new HashMapStateBackend())
                .readKeyedState(
                        OperatorIdentifier.forUidHash(op.getOperatorID().toHexString()),
                        new ExactIds(names, maps),
                        new SavedSerializerTypeInfo<>(key, Object.class),
                        Types.STRING);
    }

    @SuppressWarnings("unchecked")
    private static MapSerializer<Object, Object> mapSerializer(StateMetaInfoSnapshot state) {
        return (MapSerializer<Object, Object>)
                state.getTypeSerializerSnapshot(
                                StateMetaInfoSnapshot.CommonSerializerKeys.VALUE_SERIALIZER)
                        .restoreSerializer();
    }

    /** Emits each id of a key's exact entries once. */
    private static final class ExactIds extends KeyedStateReaderFunction<Object, String> {
        private static final long serialVersionUID = 1L;

        private final List<String> names;
        private final List<MapSerializer<Object, Object>> serializers;
        private transient List<MapState<Object, Object>> maps;

        ExactIds(List<String> names, List<MapSerializer<Object, Object>> serializers) {
            this.names = names;
            this.serializers = serializers;
        }

        @Override
        public void open(OpenContext context) {
            maps = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                MapSerializer<Object, Object> s = serializers.get(i);
                maps.add(
                        getRuntimeContext()
                                .getMapState(
                                        new MapStateDescriptor<>(
                                                names.get(i),
                                                s.getKeySerializer(),
                                                s.getValueSerializer())));
            }
        }

        @Override
        public void readKey(Object key, Context ctx, Collector<String> out) throws Exception {
            java.util.Set<String> ids = new java.util.HashSet<>();
            for (MapState<Object, Object> map : maps) {
                for (Map.Entry<Object, Object> e : map.entries()) {
                    String entry = e.getKey().toString();
                    if (!entry.isEmpty()) {
                        ids.add(entry.substring(1)); // the slot's char, then the id
                    }
                }
            }
            ids.forEach(out::collect);
        }
    }
}
