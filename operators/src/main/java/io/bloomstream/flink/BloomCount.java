package io.bloomstream.flink;

import io.bloomstream.filter.Estimate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Distinct counts from Bloom filters in managed keyed state: each key's filter (the dedup layout,
 * one page touched per event) gives n = m ln(m/m0) / k with its standard error.
 *
 * <pre>{@code
 * CountConfig config = CountConfig.builder()
 *         .filter(DedupConfig.builder().expectedItems(100_000).fpp(0.01).build())
 *         .interval(Duration.ofMinutes(1))
 *         .build();
 * // distinct users per page, every minute and at the end of input
 * DataStream<CountEstimate> perPage =
 *         BloomCount.perKey(clicks.keyBy(Click::page), IdSelector.ofString(Click::user), config);
 * // distinct users per page and tumbling hour: add .window(Duration.ofHours(1)) to the config
 * }</pre>
 *
 * <p>Records: see {@link CountEstimate}. With the scalable cascade (the default) the estimate stays
 * within its error however many items arrive; with fixed growth a filter past capacity reports
 * {@code saturated} instead of a number. Replaying events after a restore does not double-count: an
 * item already in the filter sets no bit. Set estimates between two streams: {@link BloomOverlap}.
 *
 * <p>The counting operator has uid and name {@link CountConfig#uidPrefix()} (default {@value
 * #DEFAULT_UID}); {@link #global} adds a summing operator named with the prefix and {@value
 * #SUM_SUFFIX}. Give each count of a job its own prefix.
 */
@PublicEvolving
public final class BloomCount {

    /** The default operator uid and name (see {@link CountConfig.Builder#uidPrefix}). */
    public static final String DEFAULT_UID = "bloom-count";

    /** The suffix of the summing operator's uid and name in {@link #global}. */
    public static final String SUM_SUFFIX = "-sum";

    private static final String REJECTED_ID = "bloom-count-rejected";

    private BloomCount() {}

    /** The type of estimate records. */
    public static TypeInformation<CountEstimate> estimateType() {
        return Types.POJO(CountEstimate.class);
    }

    /** The side output of events without a usable id or time, or too late for their window. */
    public static <T> OutputTag<T> rejectedTag(TypeInformation<T> type) {
        return new OutputTag<>(REJECTED_ID, type);
    }

    /** Distinct ids per key of {@code stream}. */
    public static <T, K> SingleOutputStreamOperator<CountEstimate> perKey(
            KeyedStream<T, K> stream, IdSelector<T> id, CountConfig config) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(config, "config");
        String prefix = config.uidPrefixOr(DEFAULT_UID);
        return stream.process(
                        new BloomCountFunction<K, T>(
                                id,
                                config,
                                config.filter().expectedItems(),
                                rejectedTag(stream.getType())),
                        estimateType())
                .name(prefix)
                .uid(prefix);
    }

    /**
     * Distinct ids of the whole stream: ids are sharded as in {@link BloomDedup#global}, each shard
     * counts expectedItems / shards, and one task sums the shards' latest estimates (key {@code
     * "*"}) whenever a shard reports, with the variances added. Windows are not supported here.
     */
    public static <T> SingleOutputStreamOperator<CountEstimate> global(
            DataStream<T> stream, IdSelector<T> id, CountConfig config) {
        Objects.requireNonNull(stream, "stream");
        if (config.window() != null) {
            throw new IllegalArgumentException("global counts do not support windows");
        }
        DedupConfig filter = config.filter();
        long perShard =
                Math.max(1, (filter.expectedItems() + filter.shards() - 1) / filter.shards());
        KeyedStream<T, Integer> keyed =
                stream.keyBy(new BloomDedup.ShardSelector<>(id, filter), Types.INT);
        String prefix = config.uidPrefixOr(DEFAULT_UID);
        return keyed.process(
                        new BloomCountFunction<Integer, T>(
                                id, config, perShard, rejectedTag(stream.getType())),
                        estimateType())
                .name(prefix)
                .uid(prefix)
                .keyBy(e -> "*", Types.STRING)
                .process(new ShardSum(), estimateType())
                .setParallelism(1)
                .name(prefix + SUM_SUFFIX)
                .uid(prefix + SUM_SUFFIX);
    }

    /** Keeps each shard's latest estimate and emits their sum. */
    static final class ShardSum extends KeyedProcessFunction<String, CountEstimate, CountEstimate> {
        private static final long serialVersionUID = 1L;
        private transient MapState<String, CountEstimate> latest;

        @Override
        public void open(OpenContext ctx) {
            latest =
                    getRuntimeContext()
                            .getMapState(
                                    new MapStateDescriptor<>(
                                            "bloom-count-shards", Types.STRING, estimateType()));
        }

        @Override
        public void processElement(CountEstimate shard, Context ctx, Collector<CountEstimate> out)
                throws Exception {
            latest.put(shard.key, shard);
            List<Estimate> parts = new ArrayList<>();
            int stages = 0;
            boolean allFinal = true;
            for (CountEstimate e : latest.values()) {
                parts.add(
                        new Estimate(
                                e.saturated ? 0 : e.estimate,
                                e.standardError,
                                e.bitsSet,
                                e.bits,
                                e.hashes,
                                e.valid));
                stages = Math.max(stages, e.stages);
                allFinal &= e.isFinal;
            }
            CountEstimate sum =
                    CountEstimate.of("*", Estimate.sum(parts), stages, shard.timestamp, allFinal);
            out.collect(sum);
        }
    }
}
