package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Judges ids against the Bloom filter of one key, written once for every API: probe and insert over
 * the key's {@link FilterMeta} and pages, retention generations ({@link GenerationPolicy}), cascade
 * growth ({@link StageShapes}), and the upgrade of old state ({@link StateUpgrade}). It reads and
 * writes only through a {@link FilterStore} bound to the current key; it keeps no per-key state of
 * its own.
 *
 * <p>Retention: time is cut into buckets of length L = {@link FilterMeta#generationMillis} with a
 * per-key phase o (so that keys do not all rotate in the same instant): bucket b covers [bL + o,
 * (b+1)L + o). An id seen at time t is added to the generation that holds t's bucket. An event at t
 * consults every generation holding a bucket that intersects (t - R, t + R), R the retention, so an
 * occurrence whose timestamp is less than R away from a remembered one is always found, whatever
 * the order of arrival, and one at least R + L away never is. With {@link
 * Settings#resetOnDuplicate}, a duplicate found only in generations whose buckets all end before
 * its own bucket is added to its own bucket's generation too, so the id is remembered R after its
 * last occurrence rather than its first. A generation is freed by {@link #expireAt} (a timer, never
 * the per-record path) once no on-time event can consult it. An event reads one page per stage of
 * each generation it consults and writes at most one page.
 *
 * <p>Exact mode ({@link Settings#exact}): the filter stands in front of the ids themselves, kept by
 * the store per generation ({@link FilterStore#exactContains}). A "no" of a generation's filter is
 * certain and costs no read of exact entries; a "maybe" reads them, and only an id found there is a
 * duplicate. Every id added to a generation's filter is added to its exact entries too. So, for ids
 * added in exact mode, the judge's answer is that of an exact set per generation: a first
 * occurrence is never dropped, whatever the filters' false-positive rate.
 */
@Internal
public final class FilterJudge {

    private static final Logger LOG = LoggerFactory.getLogger(FilterJudge.class);

    /**
     * What the judge needs of a dedup config.
     *
     * @param shapes the shapes of a key's cascade stages
     * @param scalable whether a full stage is followed by a new one (else it fills past capacity)
     * @param generations the retention policy (retention 0: one generation, kept for ever)
     * @param domain the time domain ({@link StateLayout#domainOf})
     * @param generationMillis L, 0 without retention
     * @param generationCount G, the generations of the config (checked against 0.1 state)
     * @param hasher the hash strategy and seed of new keys
     * @param resetOnDuplicate whether a duplicate refreshes the id's retention (see above)
     * @param exact exact mode (see above): the store keeps exact entries and its owner binds each
     *     event's exact key
     * @param description the config, as a warning names it
     */
    public record Settings(
            StageShapes shapes,
            boolean scalable,
            GenerationPolicy generations,
            int domain,
            long generationMillis,
            int generationCount,
            Hasher hasher,
            boolean resetOnDuplicate,
            boolean exact,
            String description) {}

    /**
     * The current id, hashed once its key's hasher is known (a key may keep the strategy its state
     * was first written with, see the constructor).
     */
    @FunctionalInterface
    public interface IdHash {
        /** Writes the id's hash (h1, h2) under {@code hasher} to {@code out[0..2)}. */
        void hashInto(Hasher hasher, long[] out);
    }

    private final Settings settings;
    private final FilterMetrics metrics;
    private final long run;
    private final boolean adoptsRecordedHash;
    private final long[] idHash = new long[2];
    private final long[] scratch = new long[Sizing.MAX_HASHES];
    private boolean warnedCapacity;
    private long newExpiry = Long.MIN_VALUE;

    /** The hasher of the last key read whose state records another strategy than the config's. */
    private Hasher recordedHasher;

    /**
     * @param run this run's id ({@link #newRunId}), recorded in each key whose pages the {@code
     *     pagesAllocated} metric counts ({@link FilterMeta#countedBy}); a caller that replaces the
     *     judge within one run passes the same id, so that no key's pages are counted twice
     * @param adoptRecordedHash false: a key's state must record the config's hash strategy and seed
     *     (a restore with another fails, naming them); true: each key is hashed with what its state
     *     records (the SQL function, whose users cannot name a strategy), and only new keys with
     *     the config's; ids then come through {@link #addIfAbsent(FilterStore, Object, IdHash,
     *     long, long)}
     */
    public FilterJudge(
            Settings settings, FilterMetrics metrics, long run, boolean adoptRecordedHash) {
        this.settings = settings;
        this.metrics = metrics;
        this.run = run;
        this.adoptsRecordedHash = adoptRecordedHash;
    }

    /** A random id other than {@link FilterMeta#NOT_COUNTED}: ids of two runs collide at 2^-64. */
    public static long newRunId() {
        long id;
        do {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (id == FilterMeta.NOT_COUNTED);
        return id;
    }

    /** The settings judged under. */
    public Settings settings() {
        return settings;
    }

    /**
     * Adds the id with hash (h1, h2) under the config's hasher at {@code time} unless an occurrence
     * within the retention is remembered.
     *
     * @param key the current key: only its hash code is used, for the bucket phase of a new key
     * @param horizonTime the current watermark (event time) or clock (processing time): buckets
     *     after its bucket are ahead of the horizon
     * @return true for a first occurrence
     */
    public boolean addIfAbsent(
            FilterStore store, Object key, long h1, long h2, long time, long horizonTime)
            throws Exception {
        if (adoptsRecordedHash) {
            throw new IllegalStateException("a key's hasher is known only once its state is read");
        }
        return judge(store, key, null, h1, h2, time, horizonTime);
    }

    /**
     * {@link #addIfAbsent(FilterStore, Object, long, long, long, long)} for an id hashed under its
     * key's hasher (which, with {@code adoptRecordedHash}, may be an earlier release's strategy).
     */
    public boolean addIfAbsent(
            FilterStore store, Object key, IdHash id, long time, long horizonTime)
            throws Exception {
        return judge(store, key, id, 0, 0, time, horizonTime);
    }

    /**
     * When the generation that the last {@code addIfAbsent} opened or widened expires, or {@link
     * Long#MIN_VALUE} if it used a generation the key already had (whose cleanup timer exists).
     */
    public long newExpiry() {
        return newExpiry;
    }

    /**
     * The current key's metadata, checked against the settings and upgraded (state of 0.1), its
     * pages counted once per run; null for a new key.
     *
     * @return null, or the metadata; {@code dirty[0]} is set when it must be written back
     */
    private FilterMeta read(FilterStore store, boolean[] dirty) throws Exception {
        FilterMeta meta = store.readMeta();
        if (meta == null || meta.countedBy == run) {
            return meta; // adopted and counted when this run first read it (or made by it)
        }
        if (StateUpgrade.adopt(
                meta,
                hasherOf(meta),
                settings.domain(),
                settings.generationCount(),
                settings.generationMillis())) {
            dirty[0] = true;
        }
        if (meta.countedBy != run) {
            metrics.pagesAllocated(StateUpgrade.countPages(meta, store));
            if (settings.exact()) {
                metrics.exactEntries(meta.itemsOf(-1L));
            }
            meta.countedBy = run;
            dirty[0] = true;
        }
        return meta;
    }

    private final boolean[] readDirty = new boolean[1];

    /**
     * The hasher of a key's state: the config's, unless {@link #adoptsRecordedHash} and the state
     * records another unkeyed strategy or seed (state of an earlier release), which it then keeps.
     */
    public Hasher hasherOf(FilterMeta meta) {
        Hasher hasher = settings.hasher();
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

    private boolean judge(
            FilterStore store, Object key, IdHash id, long h1, long h2, long time, long horizon)
            throws Exception {
        newExpiry = Long.MIN_VALUE;
        readDirty[0] = false;
        FilterMeta meta = read(store, readDirty);
        boolean dirty = readDirty[0];
        Hasher keyHasher = settings.hasher();
        if (meta == null) {
            long length = settings.generationMillis();
            meta =
                    FilterMeta.forDedup(
                            keyHasher, settings.domain(), length, StateLayout.phaseOf(key, length));
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
        GenerationPolicy generations = settings.generations();
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
        boolean seen = false; // found, in generations that all end before the event's bucket
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
                long[] words = store.readPage(s, i, spec, spec.page(h1));
                if (s == target && i == slotStages.size() - 1) {
                    targetWords = words;
                    targetRead = true;
                }
                if (words != null && Pages.mightContain(spec, words, h1, h2, scratch)) {
                    if (settings.exact()) {
                        boolean found = store.exactContains(s);
                        metrics.exactRead(found);
                        if (!found) {
                            break; // a false positive: the slot's exact entries cover its stages
                        }
                    }
                    if (!settings.resetOnDuplicate() || last >= bucket) {
                        metrics.observe(st.itemsAdded, st.bits, st.hashes, st.pageBits, stagesSeen);
                        if (dirty) {
                            store.writeMeta(meta, false);
                        }
                        return false;
                    }
                    seen = true; // remembered until before the event's bucket only: refresh
                    break;
                }
            }
        }
        boolean structural = dirty; // beyond an item count: a new key, generation, stage or page
        if (target < 0) {
            structural = true;
            GenerationPolicy.Opened opened =
                    generations.open(meta, bucket, StateLayout.bucketOf(horizon, meta));
            target = opened.slot();
            newExpiry = opened.newExpiry();
            if (opened.widened()) {
                metrics.generationWidened();
            }
        }
        if (insert(store, meta, target, targetRead, targetWords, h1, h2, keyHasher, stagesSeen)) {
            structural = true;
        }
        store.writeMeta(meta, !structural);
        return !seen;
    }

    /**
     * Adds (h1, h2) to the newest stage of generation {@code target} (a new one when full).
     *
     * @return whether a stage or a page was created
     */
    private boolean insert(
            FilterStore store,
            FilterMeta meta,
            int target,
            boolean targetRead,
            long[] targetWords,
            long h1,
            long h2,
            Hasher keyHasher,
            int stagesSeen)
            throws Exception {
        boolean structural = false;
        List<FilterMeta.Stage> stages = meta.slots.get(target);
        FilterMeta.Stage current = stages.isEmpty() ? null : stages.get(stages.size() - 1);
        if (current == null || (settings.scalable() && current.itemsAdded >= current.capacity)) {
            current = settings.shapes().newStage(stages.size());
            stages.add(current);
            targetWords = null;
            targetRead = true; // a new stage has no pages
            structural = true;
        }
        int stageIndex = stages.size() - 1;
        FilterSpec spec = current.spec(keyHasher);
        long page = spec.page(h1);
        long[] read = targetRead ? targetWords : store.readPage(target, stageIndex, spec, page);
        if (read == null) {
            current.pageCreated();
            metrics.pagesAllocated(1);
            structural = true;
        }
        long[] words = store.pageToWrite(target, stageIndex, spec, page, read);
        Pages.add(spec, words, h1, h2, scratch);
        store.pageWritten(target, stageIndex, spec, page, words);
        if (settings.exact()) {
            store.exactAdd(target);
            metrics.exactEntries(1);
        }
        current.itemsAdded++;
        if (current.itemsAdded == current.capacity + 1 && !settings.scalable()) {
            warnOverCapacity(current);
        }
        metrics.observe(
                current.itemsAdded,
                current.bits,
                current.hashes,
                current.pageBits,
                Math.max(stagesSeen, stages.size()));
        return structural;
    }

    private void warnOverCapacity(FilterMeta.Stage stage) {
        metrics.overCapacity();
        if (!warnedCapacity) {
            warnedCapacity = true;
            LOG.warn(overCapacityMessage(settings.exact()), stage.capacity, settings.description());
        }
    }

    /**
     * The warning, once a run, that a filter of fixed growth passed its capacity (placeholders: the
     * capacity and the config). In exact mode no answer is wrong: it says what the fuller filter
     * costs instead, a read of the exact entries for each of its false positives.
     */
    static String overCapacityMessage(boolean exact) {
        String what =
                exact
                        ? ". In exact mode no answer is wrong, but each false positive of a filter"
                                + " costs a read of the exact entries, and past its capacity more"
                                + " new ids pay it; raise expectedItems or use scalable growth to"
                                + " keep the reads down."
                        : ": its false-positive rate now exceeds the target; raise expectedItems"
                                + " or use scalable growth.";
        return "A Bloom filter passed its capacity of {} items (config {})"
                + what
                + " Further filters past capacity are counted in the overCapacity metric.";
    }

    /**
     * Frees the generations of the current key that have expired at {@code time} (the timer's
     * time): one pass over the key's pages, on the timer path only. Clears the key's state entirely
     * when nothing is left.
     *
     * @return the expiry times of the generations left (to be registered again, which is a no-op
     *     for timers that exist, and reschedules them after a restore with another retention)
     */
    public long[] expireAt(FilterStore store, long time) throws Exception {
        readDirty[0] = false;
        FilterMeta meta = read(store, readDirty);
        if (meta == null || meta.generationMillis <= 0) {
            if (meta != null && readDirty[0]) {
                store.writeMeta(meta, false);
            }
            return new long[0];
        }
        GenerationPolicy generations = settings.generations();
        long expired = generations.expiredAt(meta, time); // bit set of slots
        long[] left = generations.liveExpiries(meta, time);
        if (left.length == 0) {
            metrics.pagesAllocated(-meta.pages());
            if (settings.exact()) {
                metrics.exactEntries(-meta.itemsOf(-1L));
            }
            store.clear();
            return new long[0];
        }
        if (expired != 0) {
            store.dropSlots(expired);
            metrics.pagesAllocated(-meta.pagesOf(expired));
            if (settings.exact()) {
                metrics.exactEntries(-meta.itemsOf(expired));
            }
            for (int s = 0; s < meta.generations(); s++) {
                if ((expired & (1L << s)) != 0) {
                    meta.buckets[s] = FilterMeta.EMPTY;
                    meta.lastBuckets[s] = FilterMeta.EMPTY;
                    meta.slots.get(s).clear();
                }
            }
            store.writeMeta(meta, false);
        } else if (readDirty[0]) {
            store.writeMeta(meta, false);
        }
        return left;
    }

    /**
     * Whether the current key remembers the id, without adding it or changing any state: some stage
     * of some generation might contain it and, in exact mode, its exact entry is there. For state
     * without retention only (where every generation is consulted and nothing is forgotten, so a
     * later {@link #addIfAbsent} of the id is certain to find it too); a key without state
     * remembers nothing.
     */
    public boolean remembers(FilterStore store, IdHash id) throws Exception {
        FilterMeta meta = store.readMeta();
        if (meta == null) {
            return false;
        }
        Hasher keyHasher = hasherOf(meta);
        id.hashInto(keyHasher, idHash);
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] == FilterMeta.EMPTY) {
                continue;
            }
            List<FilterMeta.Stage> slotStages = meta.slots.get(s);
            for (int i = slotStages.size() - 1; i >= 0; i--) {
                FilterSpec spec = slotStages.get(i).spec(keyHasher);
                long[] words = store.readPage(s, i, spec, spec.page(idHash[0]));
                if (words != null
                        && Pages.mightContain(spec, words, idHash[0], idHash[1], scratch)) {
                    return !settings.exact() || store.exactContains(s);
                }
            }
        }
        return false;
    }

    /**
     * The slot of the key's most recent generation (the greatest last bucket) that has a stage, or
     * -1: where a new id most likely goes (the bundles' prefetch touches its page).
     */
    public static int newestSlot(FilterMeta meta) {
        int newest = -1;
        for (int s = 0; s < meta.generations(); s++) {
            if (meta.buckets[s] != FilterMeta.EMPTY
                    && !meta.slots.get(s).isEmpty()
                    && (newest < 0 || meta.lastBuckets[s] > meta.lastBuckets[newest])) {
                newest = s;
            }
        }
        return newest;
    }
}
