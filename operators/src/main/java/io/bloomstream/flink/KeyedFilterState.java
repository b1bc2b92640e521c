package io.bloomstream.flink;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import java.util.Iterator;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Bloom filter of the current key in managed keyed state: a {@link FilterMeta} value and one
 * MapState entry per non-empty page, keyed by (generation slot, stage, page index). An event reads
 * one page per stage of each live generation and writes at most one page.
 *
 * <p>Retention: time is cut into buckets of {@link DedupConfig#generationMillis()}; G slots hold
 * the G newest buckets. An id first seen at t is remembered while t's bucket is among the G newest,
 * i.e. for at least the retention and less than retention + one bucket. Occurrences inside that
 * window are duplicates and do not extend it.
 */
@Internal
final class KeyedFilterState {

    private static final Logger LOG = LoggerFactory.getLogger(KeyedFilterState.class);

    private final DedupConfig config;
    private final StageShapes shapes;
    private final Hasher hasher;
    private final ValueState<FilterMeta> metaState;
    private final MapState<Long, long[]> pages;
    private final DedupMetrics metrics;
    private final long[] scratch = new long[io.bloomstream.filter.Sizing.MAX_HASHES];

    /** Keys whose metadata is cached; see {@link #readMeta}. */
    static final int META_CACHE_KEYS = 4096;

    private final java.util.Map<Object, FilterMeta> metaCache =
            new java.util.LinkedHashMap<>(256, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(java.util.Map.Entry<Object, FilterMeta> e) {
                    return size() > META_CACHE_KEYS;
                }
            };
    private boolean warnedCapacity;
    private long newExpiry = Long.MIN_VALUE;

    KeyedFilterState(
            DedupConfig config,
            long itemsPerKey,
            ValueState<FilterMeta> metaState,
            MapState<Long, long[]> pages,
            DedupMetrics metrics) {
        this.config = config;
        this.shapes = new StageShapes(config, itemsPerKey);
        this.hasher = config.hasher();
        this.metaState = metaState;
        this.pages = pages;
        this.metrics = metrics;
    }

    /**
     * The metadata of the current key. A key's metadata changes only through this class, so the
     * operator keeps a private copy of the most recently used keys' metadata between events: a
     * duplicate then costs one state read (its page) instead of two, which matters on RocksDB. The
     * cache never shares an object with the state backend (values read from state are copied,
     * values written are copies), so heap snapshots taken asynchronously never see our mutations.
     */
    private FilterMeta readMeta(Object key) throws Exception {
        FilterMeta meta = metaCache.get(key);
        if (meta == null) {
            FilterMeta stored = metaState.value();
            if (stored == null) {
                return null;
            }
            meta = stored.copy();
            metaCache.put(key, meta);
        }
        return meta;
    }

    private void writeMeta(Object key, FilterMeta meta) throws Exception {
        metaCache.put(key, meta);
        metaState.update(meta.copy());
    }

    static long pageKey(int slot, int stage, long page) {
        return ((long) slot << 40) | ((long) stage << 32) | page;
    }

    static int slotOf(long pageKey) {
        return (int) (pageKey >>> 40);
    }

    static int stageOf(long pageKey) {
        return (int) ((pageKey >>> 32) & 0xFF);
    }

    /** The time bucket of a timestamp (0 without retention). */
    long bucketOf(long time) {
        return config.hasRetention() ? Math.floorDiv(time, config.generationMillis()) : 0;
    }

    /**
     * Adds the id with hash (h1, h2) at {@code time} unless it was seen within the retention.
     *
     * @return true for a first occurrence
     */
    boolean addIfAbsent(Object key, long h1, long h2, long time) throws Exception {
        FilterMeta meta = readMeta(key);
        boolean dirty = false;
        if (meta == null) {
            meta = FilterMeta.empty(hasher, config.generations());
            dirty = true;
        } else {
            meta.checkHasher(hasher);
        }
        int g = meta.generations();
        long bucket = bucketOf(time);
        long newest = newest(meta);
        if (newest == FilterMeta.EMPTY || bucket > newest) {
            newest = bucket;
            expire(meta, newest - g);
            dirty = true;
        } else if (bucket < newest - g + 1) {
            bucket = newest - g + 1; // late event: the oldest live generation
        }
        newExpiry = Long.MIN_VALUE;
        int target = (int) Math.floorMod(bucket, (long) g);
        if (meta.buckets[target] != bucket) {
            if (meta.buckets[target] != FilterMeta.EMPTY) {
                clearSlot(meta, target);
            }
            meta.buckets[target] = bucket;
            newExpiry = expiryOf(bucket, g);
            dirty = true;
        }

        // Query every live generation, newest stage first. The current stage's page of the
        // target generation is kept for the insert, so a new id reads it once.
        List<FilterMeta.Stage> stages = meta.slots.get(target);
        int currentIndex = stages.size() - 1;
        long[] currentWords = null;
        int stagesSeen = 0;
        for (int s = 0; s < g; s++) {
            if (meta.buckets[s] == FilterMeta.EMPTY || meta.buckets[s] < newest - g + 1) {
                continue;
            }
            List<FilterMeta.Stage> slotStages = meta.slots.get(s);
            stagesSeen = Math.max(stagesSeen, slotStages.size());
            for (int i = slotStages.size() - 1; i >= 0; i--) {
                FilterMeta.Stage st = slotStages.get(i);
                FilterSpec spec = st.spec(hasher);
                long[] words = pages.get(pageKey(s, i, spec.page(h1)));
                if (words != null && Pages.mightContain(spec, words, h1, h2, scratch)) {
                    metrics.observe(st.itemsAdded, st.bits, st.hashes, stagesSeen);
                    if (dirty) {
                        writeMeta(key, meta);
                    }
                    return false;
                }
                if (s == target && i == currentIndex) {
                    currentWords = words;
                }
            }
        }

        FilterMeta.Stage current = currentIndex < 0 ? null : stages.get(currentIndex);
        if (current == null
                || (config.growth() == DedupConfig.Growth.SCALABLE
                        && current.itemsAdded >= current.capacity)) {
            current = shapes.newStage(stages.size());
            stages.add(current);
            currentWords = null;
        }
        int stageIndex = stages.size() - 1;
        FilterSpec spec = current.spec(hasher);
        long pageKey = pageKey(target, stageIndex, spec.page(h1));
        if (currentWords == null) {
            currentWords = new long[Pages.words(spec)];
            metrics.pagesAllocated(1);
        }
        Pages.add(spec, currentWords, h1, h2, scratch);
        pages.put(pageKey, currentWords);
        current.itemsAdded++;
        if (current.itemsAdded == current.capacity + 1
                && config.growth() == DedupConfig.Growth.FIXED) {
            warnOverCapacity(current);
        }
        metrics.observe(
                current.itemsAdded,
                current.bits,
                current.hashes,
                Math.max(stagesSeen, stages.size()));
        writeMeta(key, meta);
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

    private static long newest(FilterMeta meta) {
        long newest = FilterMeta.EMPTY;
        for (long b : meta.buckets) {
            newest = Math.max(newest, b);
        }
        return newest;
    }

    /** Frees every slot whose bucket is at most {@code maxExpired}; returns whether any is left. */
    private boolean expire(FilterMeta meta, long maxExpired) throws Exception {
        boolean live = false;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] == FilterMeta.EMPTY) {
                continue;
            }
            if (meta.buckets[s] <= maxExpired) {
                clearSlot(meta, s);
            } else {
                live = true;
            }
        }
        return live;
    }

    private void clearSlot(FilterMeta meta, int slot) throws Exception {
        long freed = 0;
        Iterator<Long> keys = pages.keys().iterator();
        while (keys.hasNext()) {
            if (slotOf(keys.next()) == slot) {
                keys.remove();
                freed++;
            }
        }
        metrics.pagesAllocated(-freed);
        meta.buckets[slot] = FilterMeta.EMPTY;
        meta.slots.get(slot).clear();
    }

    /**
     * Frees the generations that have expired at {@code time}; clears the key's state entirely when
     * none is left.
     *
     * @return the time at which the newest live generation expires, or {@link Long#MIN_VALUE} when
     *     nothing is left
     */
    long expireAt(Object key, long time) throws Exception {
        FilterMeta meta = readMeta(key);
        if (meta == null) {
            return Long.MIN_VALUE;
        }
        int g = meta.generations();
        if (!expire(meta, bucketOf(time) - g)) {
            metaState.clear();
            pages.clear();
            metaCache.remove(key);
            return Long.MIN_VALUE;
        }
        writeMeta(key, meta);
        return expiryOf(newest(meta), g);
    }

    /** When the generation of {@code bucket} has expired: the start of bucket + G. */
    long expiryOf(long bucket, int generations) {
        return (bucket + generations) * config.generationMillis();
    }

    /**
     * When the generation that the last {@link #addIfAbsent} opened for its key expires, or {@link
     * Long#MIN_VALUE} if it used a generation the key already had (whose cleanup timer is
     * registered). A late event uses the oldest live generation, not its own bucket.
     */
    long newExpiry() {
        return newExpiry;
    }
}
