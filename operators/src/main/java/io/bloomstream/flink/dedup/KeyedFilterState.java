package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.GenerationPolicy;
import io.bloomstream.flink.state.KeyCache;
import io.bloomstream.flink.state.OwnedMetaState;
import io.bloomstream.flink.state.StageShapes;
import io.bloomstream.flink.state.StateLayout;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Bloom filter of the current key in managed keyed state: a {@link FilterMeta} value and one
 * MapState entry per non-empty page, keyed by (generation slot, stage, page index). An event reads
 * one page per stage of each generation it must consult and writes at most one page.
 *
 * <p>Retention: time is cut into buckets of length L = {@link FilterMeta#generationMillis} with a
 * per-key phase o (so that keys do not all rotate in the same instant): bucket b covers [bL + o,
 * (b+1)L + o). An id seen at time t is added to the generation that holds t's bucket. An event at t
 * consults every generation holding a bucket that intersects (t - R, t + R), R the retention, so an
 * occurrence whose timestamp is less than R away from a remembered one is always found, whatever
 * the order of arrival, and one at least R + L away never is. A generation is freed by a timer
 * (never on the per-record path) once no on-time event can consult it: when the watermark (or the
 * clock) reaches the end of its last bucket + R + allowed lateness. Events far ahead of the
 * watermark get generations of their own; a key has at most {@link FilterMetaSerializer#MAX_SLOTS}
 * generations, past which an event joins the generation nearest in time, which then covers a range
 * of buckets (correct, only kept longer).
 */
@Internal
public final class KeyedFilterState {

    private static final Logger LOG = LoggerFactory.getLogger(KeyedFilterState.class);

    /** Keys whose metadata is cached; see {@link #readMeta}. */
    public static final int META_CACHE_KEYS = 4096;

    private final DedupConfig config;
    private final StageShapes shapes;
    private final Hasher hasher;
    private final ValueState<FilterMeta> metaState;
    private final MapState<Long, long[]> pages;
    private final DedupMetrics metrics;
    private final int domain;
    private final GenerationPolicy generations;
    private final int metaCacheKeys;

    /**
     * Whether {@link #metaState} hands out objects this class may change and write back as they are
     * ({@link OwnedMetaState}): then the metadata is not copied on read and write.
     */
    private final boolean ownedMeta;

    private final Map<Object, FilterMeta> metaCache =
            new LinkedHashMap<>(256, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<Object, FilterMeta> e) {
                    return size() > metaCacheKeys;
                }
            };
    private boolean warnedCapacity;
    private long newExpiry = Long.MIN_VALUE;

    /** The write-back cache, or null to read and write state on every event. */
    private final KeyCache cache;

    /** Reads and writes the current key's pages, through the cache when it holds them. */
    private final PageAccess pageAccess;

    /** The cache entry of the key of the current call (with {@link #cache}). */
    private KeyCache.Entry entry;

    /** This run's id, recorded in each key it counts (see {@link FilterMeta#countedBy}). */
    private final long run;

    /**
     * Whether each key keeps the hash strategy its state records ({@link #hasherOf}), instead of
     * the config's being required: only {@link #hasher} for new keys.
     */
    private final boolean adoptsRecordedHash;

    /** The hasher of the last key read whose state records another strategy than the config's. */
    private Hasher recordedHasher;

    /** The current id's hash, for {@link #addIfAbsent(Object, IdHash, long, long)}. */
    private final long[] idHash = new long[2];

    /**
     * The current event's id, hashed once its key's hasher is known: under {@link
     * #adoptsRecordedHash} a key keeps the strategy it was first written with.
     */
    @FunctionalInterface
    public interface IdHash {
        /** Writes the id's hash (h1, h2) under {@code hasher} to {@code out[0..2)}. */
        void hashInto(Hasher hasher, long[] out);
    }

    /**
     * @param keys switches the backend's current key, for the write-back cache of {@link
     *     DedupConfig#cacheBytes()} bytes; null (or a budget of 0) reads and writes state on every
     *     event
     * @param metaCacheKeys without the write-back cache: how many keys' metadata to keep ({@link
     *     #META_CACHE_KEYS}; 0 when the caller cannot name the current key on every call, as the
     *     SQL function's timers cannot, so that every call reads the metadata from {@code
     *     metaState})
     * @param run this run's id ({@link #newRunId}; a caller that replaces this object within one
     *     run passes the same id, so that no key's pages are counted twice)
     * @param keysHere how many keys this instance will hold (global mode: its share of the shards),
     *     0 when not known: sizes an automatic cache ({@link DedupConfig#cacheBytesFor})
     * @param adoptRecordedHash false: a key's state must record the config's hash strategy and seed
     *     (a restore with another fails, naming them); true: each key is hashed with what its state
     *     records (the SQL function, whose users cannot name a strategy), and only new keys with
     *     the config's; ids then come through {@link #addIfAbsent(Object, IdHash, long, long)}
     */
    public KeyedFilterState(
            DedupConfig config,
            long itemsPerKey,
            long keysHere,
            ValueState<FilterMeta> metaState,
            MapState<Long, long[]> pages,
            DedupMetrics metrics,
            org.apache.flink.streaming.api.operators.KeyContext keys,
            int metaCacheKeys,
            long run,
            boolean adoptRecordedHash) {
        this.config = config;
        this.shapes =
                new StageShapes(
                        config.sizing(),
                        config.generationItems(itemsPerKey),
                        config.fpp() / config.generations());
        long cacheBytes =
                config.cacheBytesFor(
                        keysHere * config.generations() * (shapes.newStage(0).bits / 8),
                        Runtime.getRuntime().maxMemory());
        this.cache =
                keys == null || cacheBytes == 0
                        ? null
                        : new KeyCache(cacheBytes, keys, metaState, pages);
        this.pageAccess = new PageAccess(cache, pages);
        this.metaCacheKeys = metaCacheKeys;
        this.run = run;
        this.adoptsRecordedHash = adoptRecordedHash;
        this.hasher = config.hasher();
        this.metaState = metaState;
        this.ownedMeta = metaState instanceof OwnedMetaState && metaCacheKeys == 0;
        this.pages = pages;
        this.metrics = metrics;
        this.domain = StateLayout.domainOf(config.retentionPolicy());
        this.generations =
                new GenerationPolicy(
                        config.retentionMillis(),
                        domain == FilterMeta.DOMAIN_EVENT_TIME
                                ? config.allowedLateness().toMillis()
                                : 0);
    }

    /** A random id other than {@link FilterMeta#NOT_COUNTED}: ids of two runs collide at 2^-64. */
    public static long newRunId() {
        long id;
        do {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (id == FilterMeta.NOT_COUNTED);
        return id;
    }

    /**
     * The metadata of the current key. A key's metadata changes only through this class, so the
     * operator keeps a private copy of the most recently used keys' metadata between events: a
     * duplicate then costs one state read (its page) instead of two, which matters on RocksDB. The
     * cache never shares an object with the state backend (values read from state are copied,
     * values written are copies), so heap snapshots taken asynchronously never see our mutations.
     *
     * <p>A key read from state that this run has not counted yet (restored, or moved here by a
     * rescale) adds its pages to the allocated-pages gauge and is marked as counted by this run, so
     * the gauge counts every key's pages once, and freeing them can never take it below zero.
     */
    private FilterMeta readMeta(Object key) throws Exception {
        if (cache != null) {
            entry = cache.get(key);
            if (entry == null) {
                entry = cache.put(key, loadMeta());
            }
            return entry.meta;
        }
        if (metaCacheKeys == 0) {
            return loadMeta(); // no cache: the key is not even hashed
        }
        FilterMeta meta = metaCache.get(key);
        if (meta == null) {
            meta = loadMeta();
            if (meta != null) {
                metaCache.put(key, meta);
            }
        }
        return meta;
    }

    /**
     * The current key's metadata read from state (a private copy, or the state's own object when it
     * is an {@link OwnedMetaState}), or null.
     */
    private FilterMeta loadMeta() throws Exception {
        FilterMeta stored = metaState.value();
        if (stored == null) {
            return null;
        }
        FilterMeta meta = ownedMeta ? stored : stored.copy();
        boolean changed =
                StateUpgrade.adopt(
                        meta,
                        hasherOf(meta),
                        domain,
                        config.generations(),
                        config.generationMillis());
        if (meta.countedBy != run) {
            metrics.pagesAllocated(StateUpgrade.countPages(meta, pages));
            meta.countedBy = run;
            changed = true;
        }
        if (changed) {
            metaState.update(ownedMeta ? meta : meta.copy());
        }
        return meta;
    }

    /**
     * The hasher of a key's state: the config's, unless {@link #adoptsRecordedHash} and the state
     * records another unkeyed strategy or seed (state of an earlier release), which it then keeps.
     */
    private Hasher hasherOf(FilterMeta meta) {
        if (!adoptsRecordedHash
                || (meta.strategyId == hasher.strategy().id() && meta.seed == hasher.seed())) {
            return hasher;
        }
        Hasher r = recordedHasher;
        if (r == null || meta.strategyId != r.strategy().id() || meta.seed != r.seed()) {
            HashStrategy strategy = HashStrategy.fromId(meta.strategyId);
            if (strategy.isKeyed()) {
                throw new IllegalStateException(
                        "dedup state was written with the keyed hash strategy "
                                + strategy
                                + ", which this function cannot read (it has no key)");
            }
            r = recordedHasher = Hasher.forUnkeyed(strategy, meta.seed);
        }
        return r;
    }

    /**
     * The cached page that the newest stage of the key's most recent generation would probe for an
     * id with hash {@code h1}, or null when the key or page is not cached: the first pass of a
     * bundle collects these, then reads them in a tight loop so that their misses overlap.
     */
    public long[] pageToTouch(Object key, long h1) {
        if (cache == null) {
            return null;
        }
        KeyCache.Entry e = cache.get(key);
        if (e == null || e.meta == null) {
            return null;
        }
        FilterMeta meta = e.meta;
        int newest = -1;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] != FilterMeta.EMPTY
                    && !meta.slots.get(s).isEmpty()
                    && (newest < 0 || meta.lastBuckets[s] > meta.lastBuckets[newest])) {
                newest = s;
            }
        }
        if (newest < 0) {
            return null;
        }
        List<FilterMeta.Stage> stages = meta.slots.get(newest);
        int i = stages.size() - 1;
        FilterSpec spec = stages.get(i).spec(hasherOf(meta));
        if (spec.pages() > KeyCache.MAX_STAGE_PAGES) {
            return null;
        }
        long[] words = cache.page(e, newest, i, (int) spec.pages(), (int) spec.page(h1));
        return words == null || words == KeyCache.ABSENT ? null : words;
    }

    /** Writes the cache's changes to state (before a checkpoint barrier); a no-op without it. */
    public void flush() throws Exception {
        if (cache != null) {
            cache.flush();
        }
    }

    /** The write-back cache, or null. */
    public KeyCache cache() {
        return cache;
    }

    private void writeMeta(Object key, FilterMeta meta) throws Exception {
        writeMeta(key, meta, false);
    }

    /**
     * Writes the key's metadata; {@code countsOnly}: only an item count changed since it was read
     * (an {@link OwnedMetaState} may defer such a write, see {@link OwnedMetaState#updateCounts}).
     */
    private void writeMeta(Object key, FilterMeta meta, boolean countsOnly) throws Exception {
        if (cache != null) {
            entry.meta = meta;
            cache.metaChanged(entry);
            return;
        }
        if (metaCacheKeys > 0) {
            metaCache.put(key, meta);
        }
        if (!ownedMeta) {
            metaState.update(meta.copy());
        } else if (countsOnly) {
            ((OwnedMetaState) metaState).updateCounts(meta);
        } else {
            metaState.update(meta);
        }
    }

    /**
     * Adds the id with hash (h1, h2) at {@code time} unless an occurrence within the retention is
     * remembered.
     *
     * @param horizonTime the current watermark (event time) or clock (processing time): buckets
     *     after its bucket are ahead of the horizon
     * @return true for a first occurrence
     */
    public boolean addIfAbsent(Object key, long h1, long h2, long time, long horizonTime)
            throws Exception {
        if (adoptsRecordedHash) {
            throw new IllegalStateException("a key's hasher is known only once its state is read");
        }
        return addIfAbsent(key, null, h1, h2, time, horizonTime);
    }

    /**
     * {@link #addIfAbsent(Object, long, long, long, long)} for an id hashed under its key's hasher
     * (which, with {@code adoptRecordedHash}, may be an earlier release's strategy).
     */
    public boolean addIfAbsent(Object key, IdHash id, long time, long horizonTime)
            throws Exception {
        return addIfAbsent(key, id, 0, 0, time, horizonTime);
    }

    private boolean addIfAbsent(
            Object key, IdHash id, long h1, long h2, long time, long horizonTime) throws Exception {
        boolean first = judge(key, id, h1, h2, time, horizonTime);
        if (cache != null) {
            cache.trim(key); // past the budget: write back and drop the least recently used keys
        }
        return first;
    }

    private boolean judge(Object key, IdHash id, long h1, long h2, long time, long horizonTime)
            throws Exception {
        newExpiry = Long.MIN_VALUE;
        entry = null;
        FilterMeta meta = readMeta(key);
        boolean dirty = false;
        Hasher keyHasher = hasher;
        if (meta == null) {
            long length = config.generationMillis();
            meta = FilterMeta.forDedup(hasher, domain, length, StateLayout.phaseOf(key, length));
            meta.countedBy = run;
            dirty = true;
        } else {
            keyHasher = hasherOf(meta);
        }
        if (id != null) {
            id.hashInto(keyHasher, idHash);
            h1 = idHash[0];
            h2 = idHash[1];
        }
        long bucket = StateLayout.bucketOf(time, meta);
        long probeFrom = generations.probeFrom(meta, time);
        long probeTo = generations.probeTo(meta, time);

        // Query every generation the event must consult, newest stage first. The newest stage's
        // page of the generation that holds the event's bucket is kept for the insert, so a new
        // id reads it once.
        int target = -1;
        long[] targetWords = null;
        boolean targetRead = false;
        int stagesSeen = 0;
        for (int s = 0; s < meta.generations(); s++) {
            long first = meta.buckets[s];
            if (first == FilterMeta.EMPTY) {
                continue;
            }
            long last = meta.lastBuckets[s];
            if (first <= bucket && bucket <= last && target < 0) {
                target = s;
            }
            if (last < probeFrom || first > probeTo) {
                continue;
            }
            List<FilterMeta.Stage> slotStages = meta.slots.get(s);
            stagesSeen = Math.max(stagesSeen, slotStages.size());
            for (int i = slotStages.size() - 1; i >= 0; i--) {
                FilterMeta.Stage st = slotStages.get(i);
                FilterSpec spec = st.spec(keyHasher);
                long[] words = pageAccess.read(entry, s, i, spec, spec.page(h1));
                if (words != null && pageAccess.mightContain(spec, words, h1, h2)) {
                    metrics.observe(st.itemsAdded, st.bits, st.hashes, st.pageBits, stagesSeen);
                    if (dirty) {
                        writeMeta(key, meta);
                    }
                    return false;
                }
                if (s == target && i == slotStages.size() - 1) {
                    targetWords = words;
                    targetRead = true;
                }
            }
        }
        boolean structural = dirty; // beyond an item count: a new key, generation, stage or page
        if (target < 0) {
            structural = true;
            GenerationPolicy.Opened opened =
                    generations.open(meta, bucket, StateLayout.bucketOf(horizonTime, meta));
            target = opened.slot();
            newExpiry = opened.newExpiry();
            if (opened.widened()) {
                metrics.widenedGenerations.inc();
            }
        }

        List<FilterMeta.Stage> stages = meta.slots.get(target);
        FilterMeta.Stage current = stages.isEmpty() ? null : stages.get(stages.size() - 1);
        if (current == null
                || (config.growth() == FilterSizing.Growth.SCALABLE
                        && current.itemsAdded >= current.capacity)) {
            current = shapes.newStage(stages.size());
            stages.add(current);
            targetWords = null;
            targetRead = true; // a new stage has no pages
            structural = true;
        }
        int stageIndex = stages.size() - 1;
        FilterSpec spec = current.spec(keyHasher);
        long page = spec.page(h1);
        long[] words =
                targetRead ? targetWords : pageAccess.read(entry, target, stageIndex, spec, page);
        if (words == null) {
            current.pageCreated();
            metrics.pagesAllocated(1);
            structural = true;
        }
        pageAccess.add(entry, target, stageIndex, spec, page, words, h1, h2);
        current.itemsAdded++;
        if (current.itemsAdded == current.capacity + 1
                && config.growth() == FilterSizing.Growth.FIXED) {
            warnOverCapacity(current);
        }
        metrics.observe(
                current.itemsAdded,
                current.bits,
                current.hashes,
                current.pageBits,
                Math.max(stagesSeen, stages.size()));
        writeMeta(key, meta, !structural);
        return true;
    }

    private void warnOverCapacity(FilterMeta.Stage stage) {
        metrics.overCapacity.inc();
        if (!warnedCapacity) {
            warnedCapacity = true;
            LOG.warn(
                    "A Bloom filter passed its capacity of {} items (config {}): its"
                            + " false-positive rate now exceeds the target; raise expectedItems or"
                            + " use scalable growth. Further filters past capacity are counted in"
                            + " metric {}.",
                    stage.capacity,
                    config,
                    DedupMetrics.OVER_CAPACITY);
        }
    }

    /**
     * Frees the generations that have expired at {@code time} (the timer's time): one pass over the
     * key's pages, on the timer path only. Clears the key's state entirely when nothing is left.
     *
     * @return the expiry times of the generations left (to be registered again, which is a no-op
     *     for timers that exist, and reschedules them after a restore with another retention)
     */
    public long[] expireAt(Object key, long time) throws Exception {
        entry = null;
        if (cache != null) {
            cache.writeBackAndDrop(key); // the pages are freed in state, below
        }
        FilterMeta meta = readMeta(key);
        if (meta == null || meta.generationMillis <= 0) {
            return new long[0];
        }
        long expired = generations.expiredAt(meta, time); // bit set of slots
        long[] left = generations.liveExpiries(meta, time);
        if (left.length == 0) {
            metrics.pagesAllocated(-meta.pages());
            metaState.clear();
            pages.clear();
            metaCache.remove(key);
            if (cache != null) {
                cache.forget(key);
            }
            return new long[0];
        }
        if (expired != 0) {
            Iterator<Long> keys = pages.keys().iterator();
            while (keys.hasNext()) {
                if ((expired & (1L << StateLayout.slotOf(keys.next()))) != 0) {
                    keys.remove();
                }
            }
            metrics.pagesAllocated(-meta.pagesOf(expired));
            for (int s = 0; s < meta.generations(); s++) {
                if ((expired & (1L << s)) != 0) {
                    meta.buckets[s] = FilterMeta.EMPTY;
                    meta.lastBuckets[s] = FilterMeta.EMPTY;
                    meta.slots.get(s).clear();
                }
            }
            writeMeta(key, meta);
        }
        return left;
    }

    /**
     * When the generation that the last {@link #addIfAbsent} opened or widened expires, or {@link
     * Long#MIN_VALUE} if it used a generation the key already had (whose cleanup timer exists).
     */
    public long newExpiry() {
        return newExpiry;
    }
}
