package io.bloomstream.flink.dedup;

import io.bloomstream.flink.internal.HashedEvent;
import io.bloomstream.flink.internal.HashedEventTypeInfo;
import io.bloomstream.flink.internal.RestoredKeys;
import io.bloomstream.flink.internal.Shards;
import io.bloomstream.flink.state.KeyCache;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Runs a {@link DedupFunction} with its write-back cache of filter state (see {@link KeyCache})
 * and, when configured, in bundles ({@link DedupConfig.Builder#bundle}).
 *
 * <p>Cache: the operator lends the function its key context, so the cache can write keys back under
 * their own key, and flushes the cache into keyed state at the start of every snapshot
 * (checkpoints, savepoints, the final checkpoint at end of input), before the state backends copy
 * their state, so snapshots hold exactly what a write-through operator would have written.
 *
 * <p>Bundles: events are buffered (each hashed on arrival) and judged together, first touching all
 * their pages (the memory misses overlap), then judging them one by one through the same function:
 * in global mode grouped by shard, each shard made the current key once per bundle, in arrival
 * order within a shard (so within an id: which occurrence of an id passes is the same as without
 * bundles), with what they emit held and let out in arrival order ({@link ArrivalOrder}); per key
 * in arrival order. Either way the outputs are those of judging one event at a time, in order. A
 * bundle is judged when full, when its oldest event has waited the bundle delay, before a watermark
 * is processed (so lateness and event-time timers see the same watermark as without bundles),
 * before the checkpoint barrier is forwarded (so no event is in flight in a snapshot) and at the
 * end of input.
 *
 * <p>Under {@link FirstBy#EVENT_TIME} there are no bundles: an arriving event is only checked and
 * stored, and the events are judged, one at a time, by the function's event-time timers (each
 * hashed again there, into a holder of its own, not the arriving event's {@link EventHash}).
 *
 * <p>Timers and state names are those of {@link KeyedProcessOperator}, so savepoints of either
 * operator restore into the other.
 *
 * @param <K> the key type
 * @param <T> the event type
 */
@Internal
public final class DedupOperator<K, T> extends KeyedProcessOperator<K, T, T> {

    private static final long serialVersionUID = 1L;

    private final DedupFunction<K, T> function;
    private final int bundleSize;
    private final long bundleDelayMillis;

    private transient List<StreamRecord<T>> bundle;
    private transient long[] h1s;
    private transient long[] h2s;
    private transient boolean[] valid;
    private transient String[] exacts;
    private transient long[][] pages;
    private transient Object[] keyOf;

    /** Global mode: each bundled event's shard, and the judging order (by shard, stable). */
    private transient int[] shardOf;

    private transient int[] order;
    private transient int[] shardCounts;
    private transient TypeSerializer<T> copier;
    private transient TypeSerializer<Object> keyCopier;
    private transient boolean delayTimerSet;
    private transient long touched;
    private transient EventHash hash;

    /** Global mode's shard keys, when shards are routed by the id's 64-bit hash; else null. */
    private transient Integer[] shardKeys;

    /**
     * With bundles in global mode: the shard of the record {@link #setKeyContextElement1} took the
     * hash of, not yet made the current key (the bundle sets it when it judges the record), or -1.
     */
    private transient int arrivingShard;

    /** Shard counts up to this are sorted by counting; larger ones by a sort of packed longs. */
    private static final int MAX_COUNTED_SHARDS = 1 << 16;

    /**
     * Global mode on a backend of Flink's kind: the backend, and each shard's key group, so that
     * making a shard the current key hashes nothing; else null.
     */
    private transient AbstractKeyedStateBackend<Object> shardBackend;

    private transient int[] shardGroups;

    /**
     * Global mode with bundles: holds what a bundle's judging emits, lets it out in arrival order.
     */
    private transient ArrivalOrder<T> arrival;

    /** Whether {@link #isUsingCustomRawKeyedState} has checked the restore's key serializer. */
    private transient boolean keysChecked;

    DedupOperator(DedupFunction<K, T> function, DedupConfig config) {
        super(function);
        this.function = function;
        // Under FirstBy.EVENT_TIME events are judged at the watermark's timers, not on arrival.
        this.bundleSize = config.firstBy() == FirstBy.EVENT_TIME ? 0 : config.bundleSize();
        this.bundleDelayMillis = Math.max(1, config.bundleDelay().toMillis());
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open() throws Exception {
        function.useKeyContext(this);
        function.useKeyedStateBackend(getKeyedStateBackend());
        hash = function.eventHash();
        arrivingShard = -1;
        if (getStateKeySelector1() instanceof Shards.Selector<?> selector && selector.by64()) {
            int shards = selector.shards();
            shardKeys = new Integer[shards];
            for (int i = 0; i < shards; i++) {
                shardKeys[i] = i;
            }
            if (getKeyedStateBackend() instanceof AbstractKeyedStateBackend<?> backend) {
                // each shard's key group, computed once: Flink's would hash the key every time
                shardBackend = (AbstractKeyedStateBackend<Object>) backend;
                shardGroups = new int[shards];
                for (int i = 0; i < shards; i++) {
                    shardGroups[i] =
                            KeyGroupRangeAssignment.assignToKeyGroup(
                                    shardKeys[i], backend.getNumberOfKeyGroups());
                }
            }
        }
        if (bundleSize > 0 && shardKeys != null) {
            // judged by shard, let out in arrival order; before super.open(), whose collector and
            // context write to this.output
            arrival = new ArrivalOrder<>(output, bundleSize);
            output = arrival;
        }
        super.open();
        if (bundleSize > 0) {
            bundle = new ArrayList<>(bundleSize);
            h1s = new long[bundleSize];
            h2s = new long[bundleSize];
            valid = new boolean[bundleSize];
            exacts = new String[bundleSize];
            pages = new long[bundleSize][];
            keyOf = new Object[bundleSize];
            order = new int[bundleSize];
            if (shardKeys != null) {
                shardOf = new int[bundleSize];
                if (shardKeys.length <= MAX_COUNTED_SHARDS) {
                    shardCounts = new int[shardKeys.length + 1];
                }
            }
            if (getExecutionConfig().isObjectReuseEnabled()) {
                // the input may reuse the record's object once processElement returns
                TypeSerializer<?> in =
                        getOperatorConfig().getTypeSerializerIn(0, getUserCodeClassloader());
                copier =
                        (TypeSerializer<T>)
                                (in instanceof HashedEventTypeInfo.Serializer<?> hashed
                                        ? hashed.events()
                                        : in);
                keyCopier = (TypeSerializer<Object>) getKeyedStateBackend().getKeySerializer();
            }
        }
    }

    /**
     * Also refuses, for good, a restore of keyed state written with another key serializer than the
     * job's ({@link StateShape#refuseKeys}): Flink 2.2 and 2.3 call this right before the keyed
     * backend restores its state, the last hook before the backend's own refusal, a {@code
     * StateMigrationException} that restarts would meet again and again. Checked once, at the
     * restore (Flink calls this at every snapshot too).
     */
    @Override
    protected boolean isUsingCustomRawKeyedState() {
        if (!keysChecked) {
            keysChecked = true;
            TypeSerializer<?> keys =
                    getOperatorConfig().getStateKeySerializer(getUserCodeClassloader());
            Optional<TypeSerializerSnapshot<?>> was =
                    RestoredKeys.incompatible(
                            getContainingTask().getEnvironment().getTaskStateManager(),
                            getOperatorID(),
                            keys,
                            getUserCodeClassloader());
            if (was.isPresent()) {
                throw StateShape.refuseKeys(
                        RestoredKeys.describe(was.get()),
                        keys.getClass().getSimpleName(),
                        function.shards());
            }
        }
        return super.isUsingCustomRawKeyedState();
    }

    /**
     * Takes the record's hash, once: in global mode the one carried with it ({@link HashedEvent},
     * made before the shard {@code keyBy}; the record then holds the event alone), else the id
     * hashed here. The function judges by this hash, and global mode's shard (the current key) is
     * derived from it, as its key selector routed the record.
     */
    @Override
    @SuppressWarnings("unchecked")
    public void setKeyContextElement1(StreamRecord record) throws Exception {
        if (record.getValue() instanceof HashedEvent<?> carried) {
            record.replace(carried.value);
            function.carried((T) carried.value, carried.hash, carried.valid, hash);
        } else {
            function.hash((T) record.getValue(), hash);
        }
        hash.of = record;
        if (shardKeys != null) {
            int shard = hash.valid ? Shards.shardOf64(hash.h[0], shardKeys.length) : 0;
            if (bundle != null) {
                arrivingShard = shard;
            } else {
                setShard(shard);
            }
        } else {
            super.setKeyContextElement1(record);
        }
    }

    @Override
    public void processElement(StreamRecord<T> element) throws Exception {
        int shard = arrivingShard;
        arrivingShard = -1;
        if (hash.of != element) { // not keyed through setKeyContextElement1 (not by Flink's tasks)
            function.hash(element.getValue(), hash);
            shard = -1; // the caller set the current key
        }
        hash.of = null;
        if (bundle == null) {
            super.processElement(element);
            return;
        }
        int i = bundle.size();
        bundle.add(copier == null ? element : element.copy(copier.copy(element.getValue())));
        Object key = shard >= 0 ? shardKeys[shard] : getCurrentKey();
        if (shardOf != null) {
            shardOf[i] = shard >= 0 ? shard : (Integer) key;
        }
        if (copier != null && shard < 0) {
            // the key may point into the input's reused object (a POJO or tuple field): keep a copy
            key = keyCopier.copy(key);
        }
        valid[i] = hash.valid;
        exacts[i] = hash.exact; // a String: immutable, kept as is under object reuse too
        h1s[i] = hash.h[0];
        h2s[i] = hash.h[1];
        keyOf[i] = key;
        if (bundle.size() >= bundleSize) {
            judgeBundle();
        } else if (!delayTimerSet) {
            delayTimerSet = true;
            long now = getProcessingTimeService().getCurrentProcessingTime();
            getProcessingTimeService().registerTimer(now + bundleDelayMillis, t -> onDelay());
        }
    }

    private void onDelay() throws Exception {
        delayTimerSet = false;
        judgeBundle();
    }

    /**
     * Judges the buffered events: find and touch every event's page, then judge them, in global
     * mode grouped by shard (in arrival order within a shard, so within an id) with the shard made
     * the current key once per group, else in arrival order.
     */
    private void judgeBundle() throws Exception {
        if (bundle == null || bundle.isEmpty()) {
            return;
        }
        int n = bundle.size();
        // Tight loops of independent loads: the CPU keeps many of their misses in flight at once,
        // so the judging pass below finds the pages (one load per 64-byte line) in cache.
        for (int i = 0; i < n; i++) {
            pages[i] = valid[i] ? function.pageToTouch(keyOf[i], h1s[i]) : null;
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            long[] words = pages[i];
            if (words != null) {
                for (int w = 0; w < words.length; w += 8) {
                    sum += words[w];
                }
                pages[i] = null;
            }
        }
        touched += sum; // keeps the loads
        sortByShard(n);
        Object current = getCurrentKey();
        Object keyed = null;
        try {
            for (int j = 0; j < n; j++) {
                int i = order[j];
                StreamRecord<T> record = bundle.get(i);
                Object key = keyOf[i];
                if (key != keyed) { // as setKeyContextElement1 did when it arrived
                    if (shardOf != null) {
                        setShard(shardOf[i]);
                    } else {
                        setCurrentKey(key);
                    }
                    keyed = key;
                }
                keyOf[i] = null;
                hash.valid = valid[i];
                hash.exact = exacts[i];
                exacts[i] = null;
                hash.h[0] = h1s[i];
                hash.h[1] = h2s[i];
                if (arrival != null) {
                    arrival.judging(i);
                }
                super.processElement(record);
            }
            if (arrival != null) {
                arrival.release(n);
            }
        } finally {
            if (arrival != null) {
                arrival.discard(n); // a no-op after release; after a failure, drops what is held
            }
            bundle.clear();
            if (current != null && current != keyed) {
                setCurrentKey(current);
            }
        }
    }

    /** Makes global mode's shard the current key, with its key group computed at open. */
    private void setShard(int shard) {
        if (shardBackend != null) {
            shardBackend.setCurrentKeyAndKeyGroup(shardKeys[shard], shardGroups[shard]);
        } else {
            setCurrentKey(shardKeys[shard]);
        }
    }

    /**
     * Fills {@link #order} with the bundle's indices: in global mode sorted by shard, stably (a
     * counting sort, or for more than {@value #MAX_COUNTED_SHARDS} shards a sort of shard and index
     * packed in a long), else 0 .. n - 1.
     */
    private static final boolean NOSORT = Boolean.getBoolean("nosort");

    private void sortByShard(int n) {
        if (shardOf == null || NOSORT) {
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
        } else if (shardCounts != null) {
            int[] counts = shardCounts;
            java.util.Arrays.fill(counts, 0);
            for (int i = 0; i < n; i++) {
                counts[shardOf[i] + 1]++;
            }
            for (int s = 1; s < counts.length; s++) {
                counts[s] += counts[s - 1];
            }
            for (int i = 0; i < n; i++) {
                order[counts[shardOf[i]]++] = i;
            }
        } else {
            long[] packed = new long[n];
            for (int i = 0; i < n; i++) {
                packed[i] = ((long) shardOf[i] << 32) | i;
            }
            java.util.Arrays.sort(packed);
            for (int i = 0; i < n; i++) {
                order[i] = (int) packed[i];
            }
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        judgeBundle();
        super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        judgeBundle();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    /**
     * Flushes the cache into keyed state before the state backends take their snapshot (this runs
     * first in every checkpoint and savepoint, synchronously, after the barrier's records).
     */
    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        judgeBundle(); // already judged before the barrier; a harness may skip that step
        function.flush();
        super.snapshotState(context);
    }

    /** The function's config, its hash strategy set (for tests). */
    DedupConfig configForTests() {
        return function.config();
    }

    /** The write-back cache, or null when it is off (for tests). */
    KeyCache cache() {
        return function.cache();
    }

    /** Events waiting in the current bundle (for tests). */
    int bundled() {
        return bundle == null ? 0 : bundle.size();
    }

    /** Judges the events waiting in the current bundle now, as a barrier would (for tests). */
    void judgeBundleNow() throws Exception {
        judgeBundle();
    }

    /** Writes the cache's changes to keyed state now (as a snapshot would). */
    void flush() throws Exception {
        function.flush();
    }

    @Override
    public void finish() throws Exception {
        judgeBundle();
        function.flush();
        super.finish();
    }
}
