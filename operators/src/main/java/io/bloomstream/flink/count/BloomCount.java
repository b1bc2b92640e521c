package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.internal.Shards;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Distinct counts from Bloom filters in managed keyed state: each key's filter (the dedup layout,
 * one page touched per event) gives n = m ln(m/m0) / k with its standard error.
 *
 * <pre>{@code
 * CountConfig config = CountConfig.builder()
 *         .filter(FilterSizing.builder().expectedItems(100_000).fpp(0.01).build())
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
 * <p>Cost: an event reads and writes one page and its key's metadata, which keeps each stage's
 * number of set bits as pages change, so an emission reads the metadata only, not the pages. (State
 * of bloomstream 0.3 and older is counted by one scan of a key's pages when first read.)
 *
 * <p>A savepoint records the count's window (its length, or running counts): a restore with another
 * window fails for good, naming both values, since a key's state names its windows by number. State
 * written before bloomstream 0.5 has no record and restores unchecked.
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
        FilterSizing f = config.filter();
        f.checkFits(
                f.expectedItems(), f.fpp(), "one key (expectedItems " + f.expectedItems() + ")");
        String prefix = config.uidPrefixOr(DEFAULT_UID);
        return stream.process(
                        new CountFunction<K, T>(
                                id,
                                config,
                                config.filter().expectedItems(),
                                rejectedTag(stream.getType())),
                        estimateType())
                .name(prefix)
                .uid(prefix);
    }

    /**
     * Distinct ids of the whole stream: ids are sharded as by global dedup ({@link Shards}), each
     * shard counts expectedItems / shards, and one task sums the shards' latest estimates (key
     * {@code "*"}), with the variances added: one record per interval and one final record at the
     * end of input, like a key of {@link #perKey}. Windows are not supported here.
     */
    public static <T> SingleOutputStreamOperator<CountEstimate> global(
            DataStream<T> stream, IdSelector<T> id, CountConfig config) {
        Objects.requireNonNull(stream, "stream");
        if (config.window() != null) {
            throw new IllegalArgumentException("global counts do not support windows");
        }
        long perShard = Shards.itemsPerShard(config.filter().expectedItems(), config.shards());
        KeyedStream<T, Integer> keyed =
                stream.keyBy(
                        new Shards.Selector<>(id, config.shards(), config.hasher()), Types.INT);
        String prefix = config.uidPrefixOr(DEFAULT_UID);
        return keyed.process(
                        new CountFunction<Integer, T>(
                                id, config, perShard, rejectedTag(stream.getType())),
                        estimateType())
                .name(prefix)
                .uid(prefix)
                .keyBy(e -> "*", Types.STRING)
                .transform(
                        prefix + SUM_SUFFIX,
                        estimateType(),
                        new ShardSumOperator(new ShardSum(config)))
                .setParallelism(1)
                .name(prefix + SUM_SUFFIX)
                .uid(prefix + SUM_SUFFIX);
    }

    /**
     * The sum's operator: {@link ShardSum}, and at the end of an input that no event reached (an
     * empty file, say) the one final record a global count promises, a count of 0, since no shard
     * ever reported and so no timer exists to emit it. The same keyed operator as {@code
     * process(ShardSum)}, so its state and savepoints are unchanged.
     */
    static final class ShardSumOperator
            extends KeyedProcessOperator<String, CountEstimate, CountEstimate>
            implements BoundedOneInput {
        private static final long serialVersionUID = 1L;

        ShardSumOperator(ShardSum sum) {
            super(sum);
        }

        @Override
        public void endInput() throws Exception {
            ShardSum sum = (ShardSum) userFunction;
            setCurrentKey("*");
            if (!sum.finalEmitted && sum.nothingReported()) {
                output.collect(
                        new StreamRecord<>(
                                CountEstimate.of(
                                        "*", Estimate.sum(List.of()), 0, ShardSum.END, true)));
            }
        }
    }

    /**
     * Keeps each shard's latest estimate and emits their sum (key {@code "*"}): one record per
     * interval and one final record.
     *
     * <p>An interval's record is emitted once per interval boundary t that shards report: in event
     * time when the watermark passes t (every shard has then emitted its record of t, since a shard
     * emits before it forwards the watermark); in processing time {@link #processingGrace} after t,
     * to gather the shards' records of t, which their timers emit at about the same time. A shard's
     * record of an interval already emitted is not dropped: it updates the shard's value for the
     * next record. The final record is emitted when the watermark reaches its maximum (end of
     * input), after every shard's final record, and the state is then cleared.
     */
    static final class ShardSum extends KeyedProcessFunction<String, CountEstimate, CountEstimate> {
        private static final long serialVersionUID = 1L;
        private static final long END = Long.MAX_VALUE;

        /** The longest a processing-time sum waits after an interval boundary for its shards. */
        static final long MAX_PROCESSING_GRACE_MILLIS = 1000;

        private final boolean eventTime;
        private final long processingGrace;
        private transient MapState<String, CountEstimate> latest;
        private transient ValueState<Long> pending; // processing time: the pending boundary
        private transient ValueState<Long> emitted; // the boundary of the last interval record
        private transient boolean finalEmitted; // by this run

        ShardSum(CountConfig config) {
            this.eventTime = config.timeDomain() == io.bloomstream.flink.TimeDomain.EVENT_TIME;
            this.processingGrace =
                    Math.min(MAX_PROCESSING_GRACE_MILLIS, config.interval().toMillis() / 2);
        }

        @Override
        public void open(OpenContext ctx) {
            latest =
                    getRuntimeContext()
                            .getMapState(
                                    new MapStateDescriptor<>(
                                            "bloom-count-shards", Types.STRING, estimateType()));
            pending =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "bloom-count-sum-pending", LongSerializer.INSTANCE));
            emitted =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "bloom-count-sum-emitted", LongSerializer.INSTANCE));
        }

        @Override
        public void processElement(CountEstimate shard, Context ctx, Collector<CountEstimate> out)
                throws Exception {
            latest.put(shard.key, shard);
            TimerService timers = ctx.timerService();
            timers.registerEventTimeTimer(END); // the final sum at end of input
            Long last = emitted.value();
            if (shard.isFinal || (last != null && shard.timestamp <= last)) {
                return; // the final, or an interval already emitted: the next record has it
            }
            if (eventTime) {
                timers.registerEventTimeTimer(shard.timestamp); // one timer per boundary
                return;
            }
            Long next = pending.value();
            if (next != null && shard.timestamp <= next) {
                return;
            }
            if (next != null) {
                // A newer boundary before the pending one fired (a slow clock): one record, later.
                timers.deleteProcessingTimeTimer(next + processingGrace);
            }
            pending.update(shard.timestamp);
            timers.registerProcessingTimeTimer(shard.timestamp + processingGrace);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<CountEstimate> out)
                throws Exception {
            if (ctx.timeDomain() == TimeDomain.EVENT_TIME && timestamp == END) {
                Long next = pending.value();
                if (next != null) {
                    ctx.timerService().deleteProcessingTimeTimer(next + processingGrace);
                }
                emit(END, true, out);
                finalEmitted = true;
                latest.clear();
                pending.clear();
                emitted.clear();
                return;
            }
            Long boundary = eventTime ? Long.valueOf(timestamp) : pending.value();
            Long last = emitted.value();
            if (boundary == null || (last != null && boundary <= last)) {
                return;
            }
            emit(boundary, false, out);
            pending.clear();
            emitted.update(boundary);
        }

        /** Whether no shard has reported to the current key ("*") since the last final record. */
        boolean nothingReported() throws Exception {
            return latest.isEmpty();
        }

        private void emit(long boundary, boolean isFinal, Collector<CountEstimate> out)
                throws Exception {
            List<Estimate> parts = new ArrayList<>();
            int stages = 0;
            long timestamp = Long.MIN_VALUE;
            for (CountEstimate e : latest.values()) {
                parts.add(
                        new Estimate(
                                e.saturated ? 0 : e.estimate,
                                e.standardError,
                                e.bitsSet,
                                e.bits,
                                e.hashes,
                                e.valid,
                                e.saturated));
                stages = Math.max(stages, e.stages);
                timestamp = Math.max(timestamp, e.timestamp);
            }
            if (parts.isEmpty()) {
                return;
            }
            // An interval record refers to its boundary; the final one to the shards' finals.
            long time = isFinal ? timestamp : boundary;
            out.collect(CountEstimate.of("*", Estimate.sum(parts), stages, time, isFinal));
        }
    }
}
