package io.bloomstream.jobs.cluster;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.table.BloomFunctions;
import io.bloomstream.table.ShardScalarFunction;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The job {@link ScaleBenchmark} submits with {@code flink run}, once per contender: {@code 2 *
 * distinct} string ids, UUIDs ({@link #uuid}) of {@code 0 ... distinct-1}, each exactly twice, in
 * the seeded random order of {@link #permute} (a bijection of the event positions), read by Flink's
 * number sequence source (its position is checkpointed), deduplicated by the contender and written
 * by a {@link FileSink} that commits on checkpoints (exactly once). Two counters in operator state,
 * restored with the job, show as gauges: {@value #EVENTS} (events read, restored ones included) and
 * {@value #PASSED} (ids the dedup let through); they are what the benchmark samples.
 *
 * <p>Arguments: {@code CONTENDER DISTINCT OUTPUT_DIR SEED}; contenders are {@link #CONTENDERS}.
 */
public final class ScaleJob {

    static final String EVENTS = "scaleEvents";
    static final String PASSED = "scalePassed";
    static final String ATTEMPT = "Attempt";
    static final String RESTORED = "Restored";

    /** The contenders, in the order the benchmark runs them. */
    static final List<String> CONTENDERS =
            List.of(
                    "pass-through",
                    "bloom",
                    "bloom-exact",
                    "exact",
                    "exact-rocksdb-bloom",
                    "sql-bloom-dedup",
                    "sql-row-number");

    private ScaleJob() {}

    public static void main(String[] args) throws Exception {
        String contender = args[0];
        long distinct = Long.parseLong(args[1]);
        String output = args[2];
        long seed = Long.parseLong(args[3]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<String> events =
                env.fromSequence(0, 2 * distinct - 1)
                        .uid("sequence")
                        .name("sequence")
                        .map(new ToId(distinct, seed))
                        .returns(Types.STRING)
                        .uid("to-id")
                        .name("to-id")
                        .map(new Count(EVENTS))
                        .returns(Types.STRING)
                        .uid("events")
                        .name("events");
        DataStream<String> unique = dedup(contender, env, events, distinct);
        unique.map(new Count(PASSED))
                .returns(Types.STRING)
                .uid("passed")
                .name("passed")
                .sinkTo(
                        FileSink.forRowFormat(new Path(output), new SimpleStringEncoder<String>())
                                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                                .build())
                .uid("out")
                .name("out");
        env.execute("scale " + contender + " " + distinct);
    }

    /** The contender's dedup of {@code events}. */
    static DataStream<String> dedup(
            String contender,
            StreamExecutionEnvironment env,
            DataStream<String> events,
            long distinct) {
        DedupConfig.Builder config = DedupConfig.builder().expectedItems(distinct).fpp(0.01);
        switch (contender) {
            case "pass-through": // the ceiling: the same job, keyed by id, keeping nothing
                return events.keyBy(id -> id, Types.STRING)
                        .process(new PassThrough())
                        .returns(Types.STRING)
                        .uid("pass-through")
                        .name("pass-through");
            case "bloom":
                return BloomDedup.global(events, IdSelector.ofString(id -> id), config.build());
            case "bloom-exact":
                return BloomDedup.global(
                        events, IdSelector.ofString(id -> id), config.exact(true).build());
            case "exact":
            case "exact-rocksdb-bloom": // the same job; the benchmark sets RocksDB's option
                return events.keyBy(id -> id, Types.STRING)
                        .process(new ExactDedup())
                        .returns(Types.STRING)
                        .uid("exact")
                        .name("exact");
            case "sql-bloom-dedup":
                return sql(
                        env,
                        events,
                        "CREATE TEMPORARY VIEW sharded AS SELECT id, BLOOM_SHARD(id) AS shard"
                                + " FROM events",
                        "SELECT id FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                                + " id_column => 'id', expected_items => "
                                + distinct
                                + ", fpp => 0.01, shards => "
                                + ShardScalarFunction.DEFAULT_SHARDS
                                + ", uid => 'scale-dedup')");
            case "sql-row-number":
                return sql(
                        env,
                        events,
                        null,
                        "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY id ORDER BY"
                                + " pt) AS rn FROM events) WHERE rn = 1");
            default:
                throw new IllegalArgumentException(
                        "unknown contender " + contender + "; one of " + CONTENDERS);
        }
    }

    /**
     * {@code query} over the view {@code events (id, pt)}, {@code pt} the processing time, after
     * {@code view} (when not null): the SQL a user writes, as docs/sql-dedup.md shows it.
     */
    private static DataStream<String> sql(
            StreamExecutionEnvironment env, DataStream<String> events, String view, String query) {
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        BloomFunctions.registerAll(tEnv);
        tEnv.createTemporaryView(
                "input_ids",
                tEnv.fromDataStream(
                        events,
                        Schema.newBuilder().columnByExpression("pt", "PROCTIME()").build()));
        tEnv.executeSql("CREATE TEMPORARY VIEW events AS SELECT f0 AS id, pt FROM input_ids");
        if (view != null) {
            tEnv.executeSql(view);
        }
        Table result = tEnv.sqlQuery(query);
        return tEnv.toDataStream(result)
                .map((Row row) -> (String) row.getField("id"))
                .returns(Types.STRING)
                .uid("from-table")
                .name("from-table");
    }

    /**
     * Event position {@code i} of {@code [0, 2 * distinct)} to its id: the seeded permutation of
     * the positions, halved, so every id comes exactly twice, in random order.
     */
    static final class ToId extends RichMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final long distinct;
        private final long seed;

        ToId(long distinct, long seed) {
            this.distinct = distinct;
            this.seed = seed;
        }

        @Override
        public String map(Long position) {
            return uuid(permute(position, 2 * distinct, seed) >>> 1);
        }
    }

    /**
     * Id {@code j} as a UUID's text (36 characters, the most common event id): its first 64 bits
     * are {@link #mix}{@code (j)}, which {@link #idOf} inverts, the rest {@code mix(~j)}.
     */
    static String uuid(long j) {
        return new java.util.UUID(mix(j), mix(~j)).toString();
    }

    /** The {@code j} of {@link #uuid}{@code (j)}, or -1 when {@code id} is not one. */
    static long idOf(String id) {
        try {
            java.util.UUID u = java.util.UUID.fromString(id);
            long j = unmix(u.getMostSignificantBits());
            return id.length() == 36 && u.getLeastSignificantBits() == mix(~j) ? j : -1;
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /**
     * A bijection of {@code [0, n)}: a balanced four-round Feistel network over the smallest
     * power-of-four domain that holds {@code n}, cycle-walked back into range (on average fewer
     * than four rounds of the network, as the domain is less than four times {@code n}).
     */
    static long permute(long i, long n, long seed) {
        if (i < 0 || i >= n) {
            throw new IllegalArgumentException(i + " not in [0, " + n + ")");
        }
        int half = (64 - Long.numberOfLeadingZeros(Math.max(1, n - 1)) + 1) / 2;
        long mask = (1L << half) - 1;
        long x = i;
        do {
            long left = x >>> half;
            long right = x & mask;
            for (int round = 0; round < 4; round++) {
                long next = left ^ (mix(right + seed * 0x9E3779B97F4A7C15L + round) & mask);
                left = right;
                right = next;
            }
            x = (left << half) | right;
        } while (x >= n);
        return x;
    }

    private static final long M1 = 0xff51afd7ed558ccdL;
    private static final long M2 = 0xc4ceb9fe1a85ec53L;

    /** The inverse of {@link #mix}: each step undone, the multiplications by odd inverses. */
    static long unmix(long z) {
        z = z ^ (z >>> 33);
        z *= inverse(M2);
        z = z ^ (z >>> 33);
        z *= inverse(M1);
        return z ^ (z >>> 33);
    }

    /** The multiplicative inverse of odd {@code a} modulo 2^64 (Newton's iteration). */
    private static long inverse(long a) {
        long x = a; // correct to 3 bits; each step doubles them
        for (int i = 0; i < 5; i++) {
            x *= 2 - a * x;
        }
        return x;
    }

    /** MurmurHash3's 64-bit finalizer (a bijection of the longs). */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * M1;
        z = (z ^ (z >>> 33)) * M2;
        return z ^ (z >>> 33);
    }

    /**
     * Counts the records that pass, in operator state (so a restore resumes the count of the
     * checkpoint it restores), and shows the count as gauge {@code name}.
     */
    static final class Count extends RichMapFunction<String, String>
            implements CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final String name;
        private transient long count;
        private transient long restored;
        private transient ListState<Long> state;

        Count(String name) {
            this.name = name;
        }

        @Override
        public void open(OpenContext ctx) {
            getRuntimeContext().getMetricGroup().gauge(name, (Gauge<Long>) () -> count);
            // which attempt reports, and the count it restored: after a restart, the benchmark
            // waits for every subtask's new attempt before it reads the counts
            long attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            getRuntimeContext().getMetricGroup().gauge(name + ATTEMPT, (Gauge<Long>) () -> attempt);
            long from = restored;
            getRuntimeContext().getMetricGroup().gauge(name + RESTORED, (Gauge<Long>) () -> from);
        }

        @Override
        public String map(String value) {
            count++;
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            state.update(List.of(count));
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            state =
                    ctx.getOperatorStateStore()
                            .getListState(new ListStateDescriptor<>(name, Types.LONG));
            count = 0;
            for (Long c : state.get()) {
                count += c;
            }
            restored = count;
        }
    }

    /** Forwards every event: the keyed job's cost without a dedup. */
    static final class PassThrough extends KeyedProcessFunction<String, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public void processElement(String id, Context ctx, Collector<String> out) {
            out.collect(id);
        }
    }

    /** Exact dedup as a Flink user writes it: one {@code ValueState<Boolean>} per id. */
    static final class ExactDedup extends KeyedProcessFunction<String, String, String> {
        private static final long serialVersionUID = 1L;
        private transient ValueState<Boolean> seen;

        @Override
        public void open(OpenContext ctx) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void processElement(String id, Context ctx, Collector<String> out) throws Exception {
            if (seen.value() == null) {
                seen.update(Boolean.TRUE);
                out.collect(id);
            }
        }
    }
}
