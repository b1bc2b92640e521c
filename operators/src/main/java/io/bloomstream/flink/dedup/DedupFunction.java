package io.bloomstream.flink.dedup;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.EventTimes;
import io.bloomstream.flink.internal.IdHashes;
import io.bloomstream.flink.internal.RejectLog;
import io.bloomstream.flink.internal.TimeMath;
import io.bloomstream.flink.internal.WatermarkFloor;
import io.bloomstream.flink.state.ExactEntries;
import io.bloomstream.flink.state.FilterJudge;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.KeyCache;
import io.bloomstream.flink.state.KeyedStateStore;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.List;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed dedup function: first occurrences of each id per key go to the main output, duplicates
 * are dropped or go to a side output, events without a usable id (or, under event-time retention,
 * without a timestamp) go to the rejected side output. Under {@link FirstBy#EVENT_TIME} events wait
 * in {@link #PENDING_STATE} for the watermark and are judged at their event-time timers, earliest
 * time first. Use it through {@link BloomDedup}.
 *
 * @param <K> the key type
 * @param <T> the event type
 */
@Internal
public class DedupFunction<K, T> extends KeyedProcessFunction<K, T, T>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(DedupFunction.class);

    /** State name of the per-key metadata (part of the savepoint contract). */
    public static final String META_STATE = "bloom-meta";

    /** State name of the per-key pages (part of the savepoint contract). */
    public static final String PAGES_STATE = "bloom-pages";

    /**
     * State name of exact mode's entries (part of the savepoint contract): a keyed map state
     * namespaced by generation slot, see {@link ExactEntries}.
     */
    public static final String EXACT_STATE = "bloom-exact";

    /**
     * Operator (union list) state that records the shape of the state: its own version (the dedup
     * shape, not the metadata format), hash, shards, time domain and retention (see {@link
     * StateShape}); checked on restore.
     */
    public static final String SHAPE_STATE = "bloom-shape";

    /**
     * Operator (union list) state with each subtask's largest watermark judged with (0.5 on; part
     * of the savepoint contract). A restored task judges lateness against the largest of them until
     * its own watermark passes it.
     */
    public static final String WATERMARK_STATE = WatermarkFloor.STATE;

    /**
     * State name of the events of {@link FirstBy#EVENT_TIME} that wait for the watermark (part of
     * the savepoint contract, 0.5 on): a keyed {@code ListState<T>} namespaced by event time
     * ({@code LongSerializer}), the events of that time in arrival order, with an event-time timer
     * of the key at that time (see {@link PendingEvents}). Registered only when the config, or the
     * restored state's shape, has {@link FirstBy#EVENT_TIME}: state without it restores unchanged.
     */
    public static final String PENDING_STATE = "bloom-pending";

    private final IdSelector<T> idSelector;
    private final DedupConfig config;
    private final long itemsPerKey;
    private final int shards;
    private final OutputTag<T> duplicates;
    private final OutputTag<T> rejected;
    private final OutputTag<T> late;

    private transient io.bloomstream.filter.Hasher hasher;
    private transient FilterJudge judge;
    private transient KeyedStateStore store;
    private transient DedupMetrics metrics;
    private transient RejectLog rejectLog;
    private transient RejectLog lateLog;
    private transient EventTimes eventTimes;
    private transient long latenessMillis;
    private transient StateShape shape;
    private transient ListState<String> shapeState;

    /** The largest watermark judged with, kept across restores (see {@link WatermarkFloor}). */
    private transient WatermarkFloor watermarkFloor;

    private transient org.apache.flink.streaming.api.operators.KeyContext keyContext;

    /** The operator's keyed state backend (exact entries live in a namespaced state of it). */
    private transient org.apache.flink.runtime.state.KeyedStateBackend<?> keyedBackend;

    /** Whether the state may hold exact entries (exact mode now, or in the restored shape). */
    private transient boolean keepsExactEntries;

    /** The current event's hash, computed once by the operator ({@link DedupOperator}). */
    private transient EventHash hash;

    /** Whether events wait for the watermark ({@link FirstBy#EVENT_TIME}). */
    private transient boolean earliest;

    /** Whether arriving events need a timestamp and are checked for lateness. */
    private transient boolean checksEventTime;

    /**
     * Whether the state may hold waiting events (earliest now, or in the restored shape): {@link
     * #pending} is then open and drained at its timers.
     */
    private transient boolean keepsPending;

    /** The waiting events, or null when the state holds none. */
    private transient PendingEvents<T> pending;

    /** The hash of a waiting event, computed again when its timer judges it. */
    private transient EventHash timerHash;

    DedupFunction(
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
        lateLog = new RejectLog(LOG, DedupMetrics.LATE, "Late event, to the late output", "late");
        eventTimes = new EventTimes(LOG, "Bloom dedup with event-time retention");
        latenessMillis = config.allowedLateness().toMillis();
        hasher = config.hasher(); // creating an XXH3 instance derives its secret: do it once
        if (hash == null) {
            hash = new EventHash();
        }
        judge = DedupJudges.create(config, itemsPerKey, metrics, FilterJudge.newRunId(), false);
        earliest = config.firstBy() == FirstBy.EVENT_TIME;
        checksEventTime =
                config.timeDomain() == TimeDomain.EVENT_TIME && (config.hasRetention() || earliest);
        if (keepsPending) {
            if (keyedBackend == null) {
                throw new IllegalStateException(
                        "firstBy EVENT_TIME needs the dedup operator's keyed state backend: run"
                                + " the function through BloomDedup");
            }
            pending =
                    PendingEvents.open(
                            keyedBackend,
                            getRuntimeContext().createSerializer(duplicates.getTypeInfo()),
                            getRuntimeContext().isObjectReuseEnabled());
            timerHash = new EventHash();
        }
        ValueState<FilterMeta> meta =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        META_STATE, FilterMetaSerializer.INSTANCE));
        MapState<Long, long[]> pages =
                getRuntimeContext()
                        .getMapState(
                                new MapStateDescriptor<>(
                                        PAGES_STATE,
                                        LongSerializer.INSTANCE,
                                        PageSerializer.INSTANCE));
        long cacheBytes =
                keyContext == null
                        ? 0
                        : config.cacheBytesFor(
                                shardsHere() * config.generations() * stageBytes(),
                                Runtime.getRuntime().maxMemory());
        KeyCache cache = cacheBytes == 0 ? null : new KeyCache(cacheBytes, keyContext, meta, pages);
        ExactEntries exact = null;
        if (config.exact() || keepsExactEntries) {
            if (keyedBackend == null) {
                throw new IllegalStateException(
                        "exact mode needs the dedup operator's keyed state backend: run the"
                                + " function through BloomDedup");
            }
            exact =
                    ExactEntries.open(
                            keyedBackend, EXACT_STATE, keyContext, metrics::exactEntryWritten);
        }
        // the write-back cache keeps the metadata of the keys it holds: no second cache then
        store =
                new KeyedStateStore(
                        meta,
                        pages,
                        cache,
                        cache == null ? KeyedStateStore.META_CACHE_KEYS : 0,
                        exact);
    }

    /** The bytes of the first stage of a key's filter: sizes an automatic write-back cache. */
    private long stageBytes() {
        return judge.settings().shapes().newStage(0).bits / 8;
    }

    /** The shard count of global mode, 0 per key. */
    int shards() {
        return shards;
    }

    /**
     * The most shards this instance holds (global mode: its share, rounded up), 0 per key (the
     * stream's keys are not known in advance): sizes an automatic write-back cache.
     */
    private long shardsHere() {
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        return shards == 0 ? 0 : (shards + parallelism - 1) / parallelism;
    }

    /**
     * Lends the function its operator's key context, which turns on the write-back cache of {@link
     * DedupConfig#cacheBytes()}; the operator must then call {@link #flush()} before every
     * checkpoint barrier ({@link DedupOperator} does). Called before {@link #open}.
     */
    void useKeyContext(org.apache.flink.streaming.api.operators.KeyContext keys) {
        this.keyContext = keys;
    }

    /**
     * Lends the function its operator's keyed state backend, where exact mode keeps its entries
     * (namespaced by generation slot, which a runtime context cannot give). Called before {@link
     * #open}.
     */
    void useKeyedStateBackend(org.apache.flink.runtime.state.KeyedStateBackend<?> backend) {
        this.keyedBackend = backend;
    }

    /**
     * The holder of the current event's hash, which the operator fills once per event before the
     * function sees it (see {@link EventHash}).
     */
    EventHash eventHash() {
        if (hash == null) {
            hash = new EventHash();
        }
        return hash;
    }

    /**
     * Hashes an event's id into {@code into} and, in exact mode, takes its exact key; see {@link
     * EventHash}.
     */
    void hash(T event, EventHash into) {
        into.valid = IdHashes.hashInto(idSelector, event, hasher, into.h);
        if (config.exact()) {
            into.exact = into.valid ? idSelector.exactKey(event) : null;
            into.valid = into.exact != null;
        }
    }

    /**
     * Takes an event whose id's hash under the config's 64-bit hasher was made before the shard
     * {@code keyBy} ({@code HashedEvent}), as {@link #hash} would have made it, into {@code into}.
     */
    void carried(T event, long h, boolean valid, EventHash into) {
        into.valid = valid;
        into.h[0] = h;
        into.h[1] = h;
        if (config.exact()) {
            into.exact = valid ? idSelector.exactKey(event) : null;
            into.valid = into.exact != null;
        }
    }

    /**
     * The cached page an id would be judged in, or null; see {@link KeyedStateStore#pageToTouch}.
     */
    long[] pageToTouch(Object key, long h1) {
        return store.pageToTouch(key, h1, judge);
    }

    /** The write-back cache, or null when it is off or the function is not open. */
    KeyCache cache() {
        return store == null ? null : store.cache();
    }

    /** The config, its hash strategy set. */
    DedupConfig config() {
        return config;
    }

    /** Writes the cached changes of filter state to Flink's state. */
    void flush() throws Exception {
        if (store != null) {
            store.flush();
        }
    }

    @Override
    public void processElement(T event, Context ctx, Collector<T> out) throws Exception {
        metrics.recordsIn.inc();
        if (!hash.valid) {
            reject(event, ctx, "no id (null or empty)");
            return;
        }
        long time = 0;
        long horizon = 0;
        if (checksEventTime || config.hasRetention()) {
            if (checksEventTime) {
                Long ts = eventTimes.of(ctx.timestamp());
                if (ts == null) {
                    reject(
                            event,
                            ctx,
                            earliest
                                    ? "no timestamp under firstBy EVENT_TIME"
                                    : "no timestamp under event-time retention");
                    return;
                }
                time = ts;
                long watermark = watermarkFloor.advance(ctx.timerService().currentWatermark());
                horizon = watermark;
                if (watermark != Long.MIN_VALUE
                        && time <= TimeMath.minus(watermark, latenessMillis)) {
                    metrics.late.inc();
                    ctx.output(late, event);
                    lateLog.rejected(
                            metrics.late.getCount(),
                            "late: timestamp "
                                    + time
                                    + " is not after watermark "
                                    + watermark
                                    + " - allowed lateness "
                                    + latenessMillis
                                    + " ms",
                            event);
                    return;
                }
            } else {
                time = ctx.timerService().currentProcessingTime();
                horizon = time;
            }
        }
        if (earliest) {
            pending.add(time, event); // judged when the watermark reaches its time
            ctx.timerService().registerEventTimeTimer(time);
            return;
        }
        judge(event, hash, ctx.getCurrentKey(), time, horizon, ctx, out);
    }

    /** Judges an event whose hash is {@code h}: to the main output if first, else a duplicate. */
    private void judge(
            T event,
            EventHash h,
            Object key,
            long time,
            long horizon,
            Context ctx,
            Collector<T> out)
            throws Exception {
        store.bind(key);
        if (h.exact != null) {
            store.bindExact(h.exact);
        }
        boolean first = judge.addIfAbsent(store, key, h.h[0], h.h[1], time, horizon);
        store.trim(); // past the cache's budget: write back and drop the least recently used keys
        if (first) {
            metrics.passed.inc();
            out.collect(event);
        } else {
            metrics.duplicates.inc();
            if (config.emitDuplicates()) {
                ctx.output(duplicates, event);
            }
        }
        long expiry = judge.newExpiry(); // one cleanup timer per key and generation
        if (expiry != Long.MIN_VALUE) {
            register(ctx.timerService(), expiry);
        }
    }

    private void register(org.apache.flink.streaming.api.TimerService timers, long time) {
        if (config.timeDomain() == TimeDomain.EVENT_TIME) {
            timers.registerEventTimeTimer(time);
        } else {
            timers.registerProcessingTimeTimer(time);
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<T> out) throws Exception {
        long watermark = watermarkFloor.advance(ctx.timerService().currentWatermark());
        if (pending != null) {
            // A timer of waiting events (and maybe a generation's cleanup timer: the same time of
            // the same key is one timer). Events first: a generation expiring now is one that no
            // event of this time consults (it expires R + A after its last bucket ends).
            List<T> events = pending.take(timestamp);
            if (events != null) {
                judgeWaiting(events, timestamp, watermark, ctx, out);
            }
            if (!config.hasRetention()) {
                return;
            }
            // Keeps the key cached: expireAt writes state (and drops the key from the cache, see
            // dropSlots) only when a generation expires.
            store.bind(ctx.getCurrentKey());
        } else {
            store.bind(ctx.getCurrentKey()).uncache(); // the timer works on state; see dropSlots
        }
        for (long expiry : judge.expireAt(store, timestamp)) {
            register(ctx.timerService(), expiry);
        }
    }

    /**
     * Judges the events of {@code time} that waited for the watermark, in arrival order, at their
     * own time and with the watermark as the horizon; they leave with their timestamp (the
     * timer's).
     */
    private void judgeWaiting(
            List<T> events, long time, long watermark, OnTimerContext ctx, Collector<T> out)
            throws Exception {
        Object key = ctx.getCurrentKey();
        for (T event : events) {
            hash(event, timerHash); // the same id, so the same hash (and shard) as on arrival
            if (!timerHash.valid) { // cannot happen unless the id selector is not deterministic
                reject(event, ctx, "no id (null or empty) when judged at the watermark");
                continue;
            }
            judge(event, timerHash, key, time, watermark, ctx, out);
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        shapeState.update(java.util.List.of(shape.encode()));
        watermarkFloor.snapshot();
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        shape = StateShape.of(config, shards);
        shapeState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(SHAPE_STATE, StringSerializer.INSTANCE));
        watermarkFloor = new WatermarkFloor();
        watermarkFloor.initialize(context);
        keepsExactEntries = config.exact();
        keepsPending = config.firstBy() == FirstBy.EVENT_TIME;
        if (context.isRestored()) {
            for (String text : shapeState.get()) {
                StateShape recorded = StateShape.decode(text);
                shape.checkRestore(recorded, LOG);
                keepsExactEntries |= recorded.mayHoldExactEntries();
                keepsPending |= recorded.mayHoldPendingEvents();
                break; // every subtask wrote the same record
            }
        }
        if (keepsExactEntries) {
            shape = shape.withExactEntries(); // dropped with their generations, exact or not
        }
        if (keepsPending) {
            shape = shape.withPendingEvents(); // judged at their timers, earliest or not
        }
    }

    private void reject(T event, Context ctx, String reason) {
        metrics.rejected.inc();
        ctx.output(rejected, event);
        rejectLog.rejected(metrics.rejected.getCount(), reason, event);
    }
}
