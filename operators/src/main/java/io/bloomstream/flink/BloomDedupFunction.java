package io.bloomstream.flink;

import io.bloomstream.filter.Hash128;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed dedup function: first occurrences of each id per key go to the main output, duplicates
 * are dropped or go to a side output, events without a usable id (or, under event-time retention,
 * without a timestamp) go to the rejected side output. Use it through {@link BloomDedup}.
 *
 * @param <K> the key type
 * @param <T> the event type
 */
@Internal
public class BloomDedupFunction<K, T> extends KeyedProcessFunction<K, T, T> {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(BloomDedupFunction.class);

    /** State name of the per-key metadata (part of the savepoint contract). */
    public static final String META_STATE = "bloom-meta";

    /** State name of the per-key pages (part of the savepoint contract). */
    public static final String PAGES_STATE = "bloom-pages";

    private final IdSelector<T> idSelector;
    private final DedupConfig config;
    private final long itemsPerKey;
    private final int shards;
    private final OutputTag<T> duplicates;
    private final OutputTag<T> rejected;
    private final OutputTag<T> late;

    private transient io.bloomstream.filter.Hasher hasher;
    private transient KeyedFilterState filter;
    private transient DedupMetrics metrics;
    private transient RejectLog rejectLog;

    BloomDedupFunction(
            IdSelector<T> idSelector,
            DedupConfig config,
            long itemsPerKey,
            int shards,
            OutputTag<T> duplicates,
            OutputTag<T> rejected,
            OutputTag<T> late) {
        this.idSelector = Objects.requireNonNull(idSelector, "idSelector");
        this.config = Objects.requireNonNull(config, "config");
        this.itemsPerKey = itemsPerKey;
        this.shards = shards;
        this.duplicates = duplicates;
        this.rejected = rejected;
        this.late = late;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        metrics = new DedupMetrics(getRuntimeContext().getMetricGroup());
        rejectLog = new RejectLog(LOG, DedupMetrics.REJECTED);
        hasher = config.hasher(); // creating an XXH3 instance derives its secret: do it once
        filter =
                new KeyedFilterState(
                        config,
                        itemsPerKey,
                        getRuntimeContext()
                                .getState(
                                        new ValueStateDescriptor<>(
                                                META_STATE, FilterMetaSerializer.INSTANCE)),
                        getRuntimeContext()
                                .getMapState(
                                        new MapStateDescriptor<>(
                                                PAGES_STATE,
                                                LongSerializer.INSTANCE,
                                                PageSerializer.INSTANCE)),
                        metrics);
    }

    @Override
    public void processElement(T event, Context ctx, Collector<T> out) throws Exception {
        metrics.recordsIn.inc();
        Hash128 hash = idSelector.hash(event, hasher);
        if (hash == null) {
            reject(event, ctx, "no id (null or empty)");
            return;
        }
        long time = 0;
        if (config.hasRetention()) {
            if (config.timeDomain() == DedupConfig.TimeDomain.EVENT_TIME) {
                Long ts = ctx.timestamp();
                if (ts == null) {
                    reject(event, ctx, "no timestamp under event-time retention");
                    return;
                }
                time = ts;
            } else {
                time = ctx.timerService().currentProcessingTime();
            }
        }
        if (filter.addIfAbsent(ctx.getCurrentKey(), hash.h1(), hash.h2(), time)) {
            metrics.passed.inc();
            out.collect(event);
        } else {
            metrics.duplicates.inc();
            if (config.emitDuplicates()) {
                ctx.output(duplicates, event);
            }
        }
        long expiry = filter.newExpiry(); // one cleanup timer per key and generation
        if (config.hasRetention() && expiry != Long.MIN_VALUE) {
            if (config.timeDomain() == DedupConfig.TimeDomain.EVENT_TIME) {
                ctx.timerService().registerEventTimeTimer(expiry);
            } else {
                ctx.timerService().registerProcessingTimeTimer(expiry);
            }
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<T> out) throws Exception {
        filter.expireAt(ctx.getCurrentKey(), timestamp);
    }

    private void reject(T event, Context ctx, String reason) {
        metrics.rejected.inc();
        ctx.output(rejected, event);
        rejectLog.rejected(metrics.rejected.getCount(), reason, event);
    }
}
