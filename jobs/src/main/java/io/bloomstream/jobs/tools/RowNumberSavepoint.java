package io.bloomstream.jobs.tools;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.state.api.runtime.SavepointLoader;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.util.Collector;

/**
 * Reads the keys of a Flink SQL {@code ROW_NUMBER} keep-first dedup ({@code SELECT ... FROM (SELECT
 * *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proctime|rowtime) AS rn FROM t) WHERE rn = 1})
 * from its savepoint or retained checkpoint, with the State Processor API: the ids that job has
 * seen, as the input of a bootstrap, so that a bloomstream dedup that replaces it passes none of
 * them again.
 *
 * <p>What it reads: a keyed value state of Flink's deduplicate functions, keyed by the {@code
 * PARTITION BY} columns as a {@code RowData}: {@value #PROCTIME_STATE} (processing time, a {@code
 * Boolean}; the mini-batch variant and the event-time {@code RowTimeDeduplicateFunction}, the first
 * row, the same name) or {@value #ROWTIME_STATE} (Flink 2.2 and 2.3's event-time keep-first, {@code
 * RowTimeDeduplicateKeepFirstRowFunction}: the ids whose first row was emitted; a first row still
 * waiting for the watermark in {@code waiting-to-emit-on-timer} was never emitted, and is not
 * read). Each key whose state is there (and, with a state TTL, not expired at reading time, as the
 * SQL job would see it) is one output. The value's serializer is taken from the savepoint itself,
 * so a row type need not be given; the key's columns are taken as {@code STRING}s, as many as the
 * savepoint's key has, nullable or not as its key serializer accepts (other character types must be
 * given, {@link Builder#keyTypes}), since Flink checks them against the savepoint's.
 *
 * <p>Which operator: a plain SQL job has no uids ({@code table.exec.uid.generation} is {@code
 * PLAN_ONLY}), so its operators are known by the uid hashes Flink generated. Without {@link
 * Builder#uidHash}, the reader takes the one operator of the savepoint that has one of those keyed
 * states, and refuses a savepoint with none or several, listing them ({@link #candidates}).
 *
 * <p>Limits: only dedups that keep the first row (keep-last and Top-N keep other states); key
 * columns of character string types; a savepoint in the canonical format (a native RocksDB
 * savepoint or checkpoint is refused, naming the format); the synchronous state of Flink 2.3 and
 * 2.2 ({@code table.exec.async-state.enabled} false, the default). A key whose state expired but
 * was not yet cleaned up is left out, as the SQL job would let that id through again.
 */
public final class RowNumberSavepoint {

    /** The keyed value state of Flink's processing-time (and older event-time) dedup. */
    public static final String PROCTIME_STATE = "deduplicate-state";

    /** The keyed value state of Flink 2.x's event-time keep-first dedup: the ids emitted. */
    public static final String ROWTIME_STATE = "already-emitted-state-boolean";

    private RowNumberSavepoint() {}

    /**
     * One operator of a savepoint that keeps a dedup's keyed state: its uid hash, name (such as
     * {@code Deduplicate[4]}), parallelism and the name of the state read.
     */
    public record Candidate(String uidHash, String name, int parallelism, String state) {
        @Override
        public String toString() {
            return uidHash + " (" + name + ", parallelism " + parallelism + ", " + state + ")";
        }
    }

    /** The operators of the savepoint at {@code path} that have a dedup's keyed state. */
    public static List<Candidate> candidates(String path) throws IOException {
        List<Candidate> found = new ArrayList<>();
        for (OperatorState op : SavepointLoader.loadSavepointMetadata(path).getOperatorStates()) {
            StateMetaInfoSnapshot state = stateOf(op);
            if (state != null) {
                found.add(candidate(op, state.getName()));
            }
        }
        return found;
    }

    /** The dedup state of {@code op}, or null. */
    private static StateMetaInfoSnapshot stateOf(OperatorState op) throws IOException {
        Optional<KeyedStateMeta> meta = KeyedStateMeta.of(op);
        if (meta.isEmpty()) {
            return null;
        }
        Map<String, StateMetaInfoSnapshot> states = meta.get().states();
        StateMetaInfoSnapshot state = states.get(PROCTIME_STATE);
        return state != null ? state : states.get(ROWTIME_STATE);
    }

    private static OperatorIdentifier identifier(OperatorState op) {
        return OperatorIdentifier.forUidHash(op.getOperatorID().toHexString());
    }

    private static Candidate candidate(OperatorState op, String state) {
        return new Candidate(
                op.getOperatorID().toHexString(),
                op.getOperatorName().orElse("unnamed"),
                op.getParallelism(),
                state);
    }

    /** A reader of the savepoint (or retained checkpoint) at {@code path}. */
    public static Builder reader(String path) {
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException("savepoint path must be given, was " + path);
        }
        return new Builder(path);
    }

    /** What to read, and how. */
    public static final class Builder {
        private final String path;
        private String uidHash;
        private Duration stateTtl;
        private LogicalType[] keyTypes;
        private StateBackend backend = new HashMapStateBackend();

        private Builder(String path) {
            this.path = path;
        }

        /** The dedup operator's uid hash (32 hex digits); by default the one candidate. */
        public Builder uidHash(String uidHash) {
            if (uidHash == null || !uidHash.matches("[0-9a-fA-F]{32}")) {
                throw new IllegalArgumentException("uidHash must be 32 hex digits, was " + uidHash);
            }
            this.uidHash = uidHash.toLowerCase(java.util.Locale.ROOT);
            return this;
        }

        /**
         * The SQL job's {@code table.exec.state.ttl}: required if its state has a TTL (and refused
         * if it has none). Keys whose state was last written longer ago than this are left out.
         */
        public Builder stateTtl(Duration stateTtl) {
            if (stateTtl == null || stateTtl.isNegative() || stateTtl.isZero()) {
                throw new IllegalArgumentException("stateTtl must be positive, was " + stateTtl);
            }
            this.stateTtl = stateTtl;
            return this;
        }

        /**
         * The types of the {@code PARTITION BY} columns, in the key's order ({@link #readKeys}),
         * exactly as the SQL job had them (nullability included). By default {@code STRING}
         * columns, as many as the key has, each nullable or not as the savepoint's key serializer
         * accepts. Each must be a character string.
         */
        public Builder keyTypes(LogicalType... keyTypes) {
            if (keyTypes == null || keyTypes.length == 0) {
                throw new IllegalArgumentException(
                        "keyTypes must name at least one column, was " + Arrays.toString(keyTypes));
            }
            for (LogicalType t : keyTypes) {
                if (!t.is(
                        org.apache.flink.table.types.logical.LogicalTypeFamily.CHARACTER_STRING)) {
                    throw new IllegalArgumentException(
                            "keyTypes must be character strings, was " + Arrays.toString(keyTypes));
                }
            }
            this.keyTypes = keyTypes.clone();
            return this;
        }

        /**
         * The state backend to read with: by default the heap's, which reads canonical savepoints
         * of either backend.
         */
        public Builder backend(StateBackend backend) {
            if (backend == null) {
                throw new IllegalArgumentException("backend must be given, was null");
            }
            this.backend = backend;
            return this;
        }

        /**
         * The keys, each as its columns' values (null for a null column) in the key's order: that
         * of the columns in the dedup's input, which is not always the order of {@code PARTITION
         * BY} (Flink keeps the partition keys as a set of field indexes, ascending).
         */
        public DataStream<String[]> readKeys(StreamExecutionEnvironment env) throws IOException {
            OperatorState op = operator();
            StateMetaInfoSnapshot state = stateOf(op);
            TypeSerializer<Object> value = valueSerializer(state);
            LogicalType[] types = keyTypes(op);
            return SavepointReader.read(env, path, backend)
                    .readKeyedState(
                            identifier(op),
                            new Keys(state.getName(), value, stateTtl, types.length),
                            InternalTypeInfo.ofFields(types),
                            BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO);
        }

        /** The ids of a dedup whose key is one string column. */
        public DataStream<String> readIds(StreamExecutionEnvironment env) throws IOException {
            int columns = keyTypes(operator()).length;
            if (columns != 1) {
                throw new IllegalArgumentException(
                        "readIds reads a key of one column; the dedup's key has "
                                + columns
                                + ": use readKeys");
            }
            return readKeys(env).map(k -> k[0]).returns(Types.STRING).name("ids");
        }

        /** The dedup operator: that of the uid hash, or the one candidate. */
        private OperatorState operator() throws IOException {
            List<OperatorState> all =
                    new ArrayList<>(
                            SavepointLoader.loadSavepointMetadata(path).getOperatorStates());
            if (uidHash != null) {
                for (OperatorState op : all) {
                    if (op.getOperatorID().toHexString().equals(uidHash)) {
                        if (stateOf(op) == null) {
                            throw new IllegalArgumentException(
                                    "uidHash "
                                            + uidHash
                                            + " has neither keyed state "
                                            + PROCTIME_STATE
                                            + " nor "
                                            + ROWTIME_STATE
                                            + ": it is no ROW_NUMBER keep-first dedup; the"
                                            + " savepoint's are: "
                                            + candidates(path));
                        }
                        return op;
                    }
                }
                throw new IllegalArgumentException(
                        "uidHash "
                                + uidHash
                                + " is no operator of "
                                + path
                                + "; its dedup operators are: "
                                + candidates(path));
            }
            List<OperatorState> found = new ArrayList<>();
            List<Candidate> described = new ArrayList<>();
            for (OperatorState op : all) {
                StateMetaInfoSnapshot state = stateOf(op);
                if (state != null) {
                    found.add(op);
                    described.add(candidate(op, state.getName()));
                }
            }
            if (found.size() != 1) {
                throw new IllegalArgumentException(
                        path
                                + " has "
                                + found.size()
                                + " operators with a dedup's keyed state ("
                                + PROCTIME_STATE
                                + " or "
                                + ROWTIME_STATE
                                + ")"
                                + (found.isEmpty()
                                        ? " (no ROW_NUMBER keep-first dedup); its keyed"
                                                + " operators: "
                                                + keyedOperators(all)
                                        : ": "
                                                + described.stream()
                                                        .map(Candidate::toString)
                                                        .collect(Collectors.joining(", "))
                                                + "; give the uid hash of one"));
            }
            return found.get(0);
        }

        /**
         * The key's types: those given, or STRING columns, as many as the savepoint's key has, with
         * the first nullability (all nullable first) that its key serializer accepts.
         */
        private LogicalType[] keyTypes(OperatorState op) throws IOException {
            TypeSerializerSnapshot<?> old = KeyedStateMeta.of(op).orElseThrow().keySerializer();
            if (keyTypes != null) {
                if (!accepts(old, keyTypes)) {
                    throw new IllegalArgumentException(
                            "keyTypes "
                                    + Arrays.toString(keyTypes)
                                    + " are not the key of the dedup in "
                                    + path
                                    + " (Flink's key serializer refuses them)");
                }
                return keyTypes;
            }
            TypeSerializer<?> restored = old.restoreSerializer();
            int columns =
                    restored instanceof RowDataSerializer
                            ? ((RowDataSerializer) restored).getArity()
                            : 0;
            for (int nulls = 0; columns > 0 && columns <= 8 && nulls < 1 << columns; nulls++) {
                LogicalType[] types = new LogicalType[columns];
                for (int i = 0; i < columns; i++) {
                    types[i] = new VarCharType((nulls & (1 << i)) == 0, VarCharType.MAX_LENGTH);
                }
                if (accepts(old, types)) {
                    return types;
                }
            }
            throw new IllegalArgumentException(
                    "the key of the dedup in "
                            + path
                            + " ("
                            + restored.getClass().getSimpleName()
                            + ", "
                            + columns
                            + " columns) is not STRING columns: give its types as keyTypes");
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private static boolean accepts(TypeSerializerSnapshot<?> old, LogicalType[] types) {
            TypeSerializerSnapshot<RowData> now =
                    new RowDataSerializer(types).snapshotConfiguration();
            return !now.resolveSchemaCompatibility((TypeSerializerSnapshot) old).isIncompatible()
                    && !now.resolveSchemaCompatibility((TypeSerializerSnapshot) old)
                            .isCompatibleAfterMigration();
        }

        /** Each operator with keyed state, with its states' names. */
        private String keyedOperators(List<OperatorState> all) throws IOException {
            List<String> listed = new ArrayList<>();
            for (OperatorState op : all) {
                Optional<KeyedStateMeta> meta = KeyedStateMeta.of(op);
                if (meta.isPresent()) {
                    listed.add(
                            op.getOperatorID().toHexString()
                                    + " ("
                                    + op.getOperatorName().orElse("unnamed")
                                    + op.getOperatorUid().map(u -> ", uid " + u).orElse("")
                                    + ") "
                                    + new java.util.TreeSet<>(meta.get().states().keySet()));
                }
            }
            return listed.isEmpty() ? "none" : String.join(", ", listed);
        }

        /** The state's value serializer as the savepoint has it, unwrapped from its TTL if any. */
        @SuppressWarnings("unchecked")
        private TypeSerializer<Object> valueSerializer(StateMetaInfoSnapshot state) {
            TypeSerializerSnapshot<?> snapshot =
                    state.getTypeSerializerSnapshot(
                            StateMetaInfoSnapshot.CommonSerializerKeys.VALUE_SERIALIZER);
            boolean ttl = snapshot.getClass().getName().endsWith("TtlSerializerSnapshot");
            if (ttl && stateTtl == null) {
                throw new IllegalArgumentException(
                        "the "
                                + state.getName()
                                + " state of "
                                + path
                                + " has a TTL (the job set table.exec.state.ttl): give it as"
                                + " stateTtl, so that expired ids are left out");
            }
            if (!ttl && stateTtl != null) {
                throw new IllegalArgumentException(
                        "stateTtl "
                                + stateTtl
                                + " was given but the "
                                + state.getName()
                                + " state of "
                                + path
                                + " has no TTL (the job did not set table.exec.state.ttl)");
            }
            if (ttl) {
                // TtlSerializer(Long time stamp, user value)
                snapshot =
                        ((CompositeTypeSerializerSnapshot<?, ?>) snapshot)
                                .getNestedSerializerSnapshots()[1];
            }
            return (TypeSerializer<Object>) snapshot.restoreSerializer();
        }
    }

    /** Emits each key whose state is set (and not expired). */
    private static final class Keys extends KeyedStateReaderFunction<RowData, String[]> {
        private static final long serialVersionUID = 1L;

        private final String name;
        private final TypeSerializer<Object> valueSerializer;
        private final Duration ttl;
        private final int columns;
        private transient ValueState<Object> state;

        Keys(String name, TypeSerializer<Object> valueSerializer, Duration ttl, int columns) {
            this.name = name;
            this.valueSerializer = valueSerializer;
            this.ttl = ttl;
            this.columns = columns;
        }

        @Override
        public void open(OpenContext context) {
            ValueStateDescriptor<Object> descriptor =
                    new ValueStateDescriptor<>(name, valueSerializer);
            if (ttl != null) {
                descriptor.enableTimeToLive(
                        StateTtlConfig.newBuilder(ttl)
                                .setStateVisibility(
                                        StateTtlConfig.StateVisibility.NeverReturnExpired)
                                .build());
            }
            state = getRuntimeContext().getState(descriptor);
        }

        @Override
        public void readKey(RowData key, Context ctx, Collector<String[]> out) throws Exception {
            if (state.value() == null) {
                return; // expired
            }
            String[] values = new String[columns];
            for (int i = 0; i < columns; i++) {
                values[i] = key.isNullAt(i) ? null : key.getString(i).toString();
            }
            out.collect(values);
        }
    }
}
