package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.EventTimes;
import io.bloomstream.flink.internal.IdHashes;
import io.bloomstream.flink.internal.RejectLog;
import io.bloomstream.flink.internal.WatermarkFloor;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * The keyed distinct-count function: adds each event's id to its key's filter (one page touched)
 * and emits {@link CountEstimate}s on timers, and a final one per key at the end of input. Use it
 * through {@link BloomCount}.
 *
 * @param <K> the key type
 * @param <T> the event type
 */
@Internal
public class CountFunction<K, T> extends KeyedProcessFunction<K, T, CountEstimate>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** State names (part of the savepoint contract). */
    public static final String META_STATE = "bloom-count-meta";

    /** See {@link #META_STATE}. */
    public static final String PAGES_STATE = "bloom-count-pages";

    /**
     * Metric (gauge): the state pages this subtask created since it started, less those it freed
     * (the name of dedup's gauge of the same meaning; a restored key's pages are not counted).
     */
    public static final String ALLOCATED_PAGES = "bloomAllocatedPages";

    /** See {@link #META_STATE}. */
    public static final String EMITTED_STATE = "bloom-count-emitted";

    /** See {@link #META_STATE}. */
    public static final String NEXT_STATE = "bloom-count-next";

    /**
     * Operator (union list) state recording the shape of the state, its window (see {@link
     * CountShape}); checked on restore. State written before bloomstream 0.5 has none.
     */
    public static final String SHAPE_STATE = "bloom-count-shape";

    /** Counter: events without a usable id or time, or too late for their window. */
    public static final String REJECTED = "bloomCountRejected";

    private static final long END = Long.MAX_VALUE;
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(CountFunction.class);

    private final IdSelector<T> idSelector;
    private final CountConfig config;
    private final long itemsPerKey;
    private final OutputTag<T> rejected;

    private transient Hasher hasher;
    private transient long[] hash; // the current event's (h1, h2), written without allocation
    private transient CountState state;
    private transient ValueState<Long> emitted; // items at the last emission (running counts)
    private transient ValueState<Long> next; // the pending emission timer (running counts)
    private transient Counter rejectedCount;
    private transient RejectLog rejectLog;
    private transient EventTimes eventTimes;
    private transient boolean eventTime;
    private transient long windowMillis;

    CountFunction(
            IdSelector<T> idSelector, CountConfig config, long itemsPerKey, OutputTag<T> rejected) {
        this.idSelector = Objects.requireNonNull(idSelector, "idSelector");
        this.config = Objects.requireNonNull(config, "config");
        this.itemsPerKey = itemsPerKey;
        this.rejected = rejected;
    }

    @Override
    public void open(OpenContext openContext) {
        hasher = config.hasher();
        hash = new long[2];
        eventTime = config.timeDomain() == TimeDomain.EVENT_TIME;
        windowMillis = config.window() == null ? 0 : config.window().toMillis();
        state =
                new CountState(
                        config.filter(),
                        hasher,
                        itemsPerKey,
                        windowMillis == 0 ? 1 : config.openWindows(),
                        getRuntimeContext()
                                .getState(
                                        new ValueStateDescriptor<>(
                                                META_STATE, FilterMetaSerializer.INSTANCE)),
                        getRuntimeContext()
                                .getMapState(
                                        new MapStateDescriptor<>(
                                                PAGES_STATE,
                                                LongSerializer.INSTANCE,
                                                PageSerializer.INSTANCE)));
        emitted =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(EMITTED_STATE, LongSerializer.INSTANCE));
        next =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>(NEXT_STATE, LongSerializer.INSTANCE));
        rejectedCount = getRuntimeContext().getMetricGroup().counter(REJECTED);
        CountState counted = state;
        getRuntimeContext()
                .getMetricGroup()
                .gauge(ALLOCATED_PAGES, (org.apache.flink.metrics.Gauge<Long>) counted::pagesHeld);
        rejectLog = new RejectLog(LOG, REJECTED);
        eventTimes = new EventTimes(LOG, "Bloom count on event time");
    }

    /**
     * The largest watermark judged with, kept across restores: an event of a window that closed
     * before a failure is rejected when replayed, not counted into a second record of that window.
     */
    private transient WatermarkFloor watermarkFloor;

    private transient CountShape shape;
    private transient ListState<String> shapeState;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        shape = CountShape.of(config);
        shapeState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(SHAPE_STATE, StringSerializer.INSTANCE));
        if (context.isRestored()) {
            for (String recorded : shapeState.get()) {
                shape.checkRestore(CountShape.decode(recorded));
                break; // every subtask wrote the same record
            }
        }
        watermarkFloor = new WatermarkFloor();
        watermarkFloor.initialize(context);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        shapeState.update(java.util.List.of(shape.encode()));
        watermarkFloor.snapshot();
    }

    @Override
    public void processElement(T event, Context ctx, Collector<CountEstimate> out)
            throws Exception {
        boolean hashed = IdHashes.hashInto(idSelector, event, hasher, hash);
        Long time =
                eventTime
                        ? eventTimes.of(ctx.timestamp())
                        : Long.valueOf(ctx.timerService().currentProcessingTime());
        if (!hashed || time == null) {
            reject(event, ctx, !hashed ? "no id (null or empty)" : "no timestamp");
            return;
        }
        TimerService timers = ctx.timerService();
        if (windowMillis == 0) {
            if (state.add(0, hash[0], hash[1])) {
                timers.registerEventTimeTimer(END); // the key's final record at end of input
            }
            if (next.value() == null) {
                long t = config.nextTick(time);
                register(timers, t);
                next.update(t);
            }
            return;
        }
        long window = Math.floorDiv(time, windowMillis);
        long end = (window + 1) * windowMillis - 1;
        if (eventTime && end <= watermarkFloor.advance(timers.currentWatermark())) {
            reject(event, ctx, "its window has closed");
            return;
        }
        long occupant = state.occupant(window);
        if (occupant != FilterMeta.EMPTY) {
            if (occupant > window) {
                reject(event, ctx, "older than every window the key keeps open");
                return;
            }
            emitWindow(ctx.getCurrentKey(), occupant, timers, out); // too many open: close oldest
        }
        if (state.add(window, hash[0], hash[1])) {
            register(timers, end);
            if (!eventTime) {
                // End of input closes open processing-time windows through the watermark at its
                // maximum; event-time windows need nothing more, it fires their own timers.
                timers.registerEventTimeTimer(END);
            }
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<CountEstimate> out)
            throws Exception {
        watermarkFloor.advance(ctx.timerService().currentWatermark());
        K key = ctx.getCurrentKey();
        if (windowMillis > 0) {
            if (timestamp == END) {
                for (long window : state.openWindows()) {
                    emitWindow(key, window, ctx.timerService(), out); // end of input closes all
                }
            } else {
                emitWindow(
                        key,
                        Math.floorDiv(timestamp + 1, windowMillis) - 1,
                        ctx.timerService(),
                        out);
            }
            return;
        }
        if (timestamp == END) {
            emit(key, 0, eventTime ? END : ctx.timerService().currentProcessingTime(), true, out);
            return;
        }
        next.clear();
        long items = state.itemsAdded(0);
        Long last = emitted.value();
        if (!config.onChangeOnly() || last == null || last != items) {
            emit(key, 0, timestamp, false, out);
            emitted.update(items);
        }
        // Periodic emission continues without events unless only changes are emitted; at the
        // end of input (watermark at its maximum) only the final record remains.
        boolean draining = eventTime && ctx.timerService().currentWatermark() == END;
        if (!config.onChangeOnly() && !draining) {
            // The next boundary after now: after downtime or a watermark jump, one record, not
            // one per missed interval.
            long now =
                    eventTime
                            ? ctx.timerService().currentWatermark()
                            : ctx.timerService().currentProcessingTime();
            long t = config.nextTick(Math.max(timestamp, now));
            register(ctx.timerService(), t);
            next.update(t);
        }
    }

    private void emitWindow(K key, long window, TimerService timers, Collector<CountEstimate> out)
            throws Exception {
        emit(key, window, (window + 1) * windowMillis, true, out);
        if (state.free(window) && !eventTime) {
            timers.deleteEventTimeTimer(END); // nothing left: no timer either
        }
    }

    private void emit(
            K key, long window, long timestamp, boolean isFinal, Collector<CountEstimate> out)
            throws Exception {
        Map.Entry<Estimate, Integer> e = state.estimate(window);
        if (e == null) {
            return;
        }
        CountEstimate record =
                CountEstimate.of(String.valueOf(key), e.getKey(), e.getValue(), timestamp, isFinal);
        if (windowMillis > 0) {
            record.windowStart = window * windowMillis;
        }
        out.collect(record);
    }

    private void register(TimerService timers, long time) {
        if (eventTime) {
            timers.registerEventTimeTimer(time);
        } else {
            timers.registerProcessingTimeTimer(time);
        }
    }

    private void reject(T event, Context ctx, String reason) {
        rejectedCount.inc();
        ctx.output(rejected, event);
        rejectLog.rejected(rejectedCount.getCount(), reason, event);
    }
}
