package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.StageShapes;
import io.bloomstream.flink.state.StateLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;

/**
 * The counting filters of the current key in managed keyed state, in the dedup operator's layout (a
 * {@link FilterMeta} value and one MapState entry per non-empty page): one slot per open window
 * (one slot for running counts), each a cascade of stages. An event reads and writes one page and
 * adds the bits it set to its stage's {@link FilterMeta.Stage#setBits}, so an estimate reads only
 * the metadata. State written before set bits were recorded (metadata format 2 and older) is
 * counted by one scan of the slot's pages when first read, and recorded then.
 */
@Internal
final class CountState {

    private final FilterSizing sizing;
    private final StageShapes shapes;
    private long pagesHeld; // this subtask's pages created since it started, less those freed
    private final Hasher hasher;
    private final int slots;
    private final ValueState<FilterMeta> metaState;
    private final MapState<Long, long[]> pages;
    private final long[] scratch = new long[io.bloomstream.filter.Sizing.MAX_HASHES];

    CountState(
            FilterSizing config,
            Hasher hasher,
            long itemsPerKey,
            int slots,
            ValueState<FilterMeta> metaState,
            MapState<Long, long[]> pages) {
        this.sizing = config;
        this.shapes = new StageShapes(config, itemsPerKey, config.fpp());
        this.hasher = hasher;
        this.slots = slots;
        this.metaState = metaState;
        this.pages = pages;
    }

    /**
     * The slot of a window in a key's metadata (its own slot count, even after a config change).
     */
    private static int slotOf(FilterMeta meta, long window) {
        return (int) Math.floorMod(window, (long) meta.generations());
    }

    /**
     * The window another, older window occupies {@code window}'s slot with, or {@link
     * FilterMeta#EMPTY}: the caller must close that one first.
     */
    long occupant(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null) {
            return FilterMeta.EMPTY;
        }
        long b = meta.buckets[slotOf(meta, window)];
        return b == window ? FilterMeta.EMPTY : b;
    }

    /**
     * Adds an item to the filter of {@code window} (0 for running counts).
     *
     * @return whether this item opened the window (its first item, for running counts the key's
     *     first): the caller schedules the window's timers then, not on every item
     */
    boolean add(long window, long h1, long h2) throws Exception {
        return add(window, h1, h2, null);
    }

    /**
     * Adds an item as {@link #add(long, long, long)}; a first stage takes the shape and capacity of
     * the first stage of {@code like}'s filter of the same window (read only then; none: the
     * config's shape), so that a filter made after a restore with another config can still be ORed
     * with an older one it is compared with.
     */
    boolean add(long window, long h1, long h2, CountState like) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null) {
            meta = FilterMeta.empty(hasher, slots);
        } else {
            meta.checkHasher(hasher);
        }
        int slot = slotOf(meta, window);
        boolean opened = meta.buckets[slot] != window;
        if (opened) {
            if (meta.buckets[slot] != FilterMeta.EMPTY) {
                throw new IllegalStateException("slot of window " + window + " is occupied");
            }
            meta.buckets[slot] = window;
        }
        List<FilterMeta.Stage> stages = meta.slots.get(slot);
        long[] currentWords = null;
        for (int i = stages.size() - 1; i >= 0; i--) {
            FilterSpec spec = stages.get(i).spec(hasher);
            long[] words = pages.get(StateLayout.pageKey(slot, i, spec.page(h1)));
            if (words != null && Pages.mightContain(spec, words, h1, h2, scratch)) {
                return false; // seen before, so the window was already open
            }
            if (i == stages.size() - 1) {
                currentWords = words;
            }
        }
        FilterMeta.Stage current = stages.isEmpty() ? null : stages.get(stages.size() - 1);
        if (current == null
                || (sizing.growth() == FilterSizing.Growth.SCALABLE
                        && current.itemsAdded >= current.capacity)) {
            current = shapes.newStage(stages.size());
            FilterMeta.Stage template =
                    stages.isEmpty() && like != null ? like.firstStage(window) : null;
            if (template != null) {
                current =
                        new FilterMeta.Stage(
                                template.bits,
                                template.hashes,
                                template.pageBits,
                                template.capacity,
                                0);
            }
            current.setBits = 0; // a new stage: counted from its first bit
            stages.add(current);
            currentWords = null;
        }
        FilterSpec spec = current.spec(hasher);
        if (currentWords == null) {
            currentWords = new long[Pages.words(spec)];
            current.pageCreated();
            pagesHeld++;
        }
        current.bitsSet(Pages.addCounting(spec, currentWords, h1, h2, scratch));
        pages.put(StateLayout.pageKey(slot, stages.size() - 1, spec.page(h1)), currentWords);
        current.itemsAdded++;
        metaState.update(meta);
        return opened;
    }

    /**
     * The pages this subtask created since it started, less those it freed since (never negative;
     * the pages of a key restored from a checkpoint are not counted): the state it added.
     */
    long pagesHeld() {
        return pagesHeld;
    }

    /** The windows the key has open, oldest first. */
    List<Long> openWindows() throws Exception {
        FilterMeta meta = metaState.value();
        List<Long> open = new ArrayList<>();
        if (meta != null) {
            for (long b : meta.buckets) {
                if (b != FilterMeta.EMPTY) {
                    open.add(b);
                }
            }
            open.sort(null);
        }
        return open;
    }

    /** Items taken as new by {@code window}'s filter (changes exactly when its bits change). */
    long itemsAdded(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null || meta.buckets[slotOf(meta, window)] != window) {
            return 0;
        }
        long n = 0;
        for (FilterMeta.Stage s : meta.slots.get(slotOf(meta, window))) {
            n += s.itemsAdded;
        }
        return n;
    }

    /** The first stage of {@code window}'s filter (its shape and capacity), or null if none. */
    FilterMeta.Stage firstStage(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null || meta.buckets[slotOf(meta, window)] != window) {
            return null;
        }
        List<FilterMeta.Stage> stages = meta.slots.get(slotOf(meta, window));
        return stages.isEmpty() ? null : stages.get(0);
    }

    /**
     * The shapes of {@code window}'s stages as they were made (a restore with another config keeps
     * them), oldest first; empty if the window has no filter.
     */
    List<FilterSpec> stageSpecs(long window) throws Exception {
        FilterMeta meta = metaState.value();
        List<FilterSpec> specs = new ArrayList<>();
        if (meta != null && meta.buckets[slotOf(meta, window)] == window) {
            for (FilterMeta.Stage s : meta.slots.get(slotOf(meta, window))) {
                specs.add(s.spec(hasher));
            }
        }
        return specs;
    }

    /** The estimate of {@code window}'s filter and its stage count, or null if it has none. */
    Map.Entry<Estimate, Integer> estimate(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null || meta.buckets[slotOf(meta, window)] != window) {
            return null;
        }
        List<FilterMeta.Stage> stages = setBitsOf(meta, slotOf(meta, window));
        List<Estimate> parts = new ArrayList<>(stages.size());
        for (FilterMeta.Stage s : stages) {
            parts.add(Estimate.of(s.setBits, s.spec(hasher)));
        }
        return Map.entry(Estimate.sum(parts), stages.size());
    }

    /**
     * The set bits of each stage of {@code window}'s filter, oldest first; empty if the window has
     * no filter.
     */
    long[] setBits(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null || meta.buckets[slotOf(meta, window)] != window) {
            return new long[0];
        }
        List<FilterMeta.Stage> stages = setBitsOf(meta, slotOf(meta, window));
        long[] bits = new long[stages.size()];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = stages.get(i).setBits;
        }
        return bits;
    }

    /**
     * The non-empty pages of {@code window}'s filter (0 if it has none), or {@link
     * FilterMeta#UNKNOWN_PAGES} for state that did not record them (metadata format 1).
     */
    long pages(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null || meta.buckets[slotOf(meta, window)] != window) {
            return 0;
        }
        long n = 0;
        for (FilterMeta.Stage s : meta.slots.get(slotOf(meta, window))) {
            if (s.pages == FilterMeta.UNKNOWN_PAGES) {
                return FilterMeta.UNKNOWN_PAGES;
            }
            n += s.pages;
        }
        return n;
    }

    /**
     * The stages of {@code slot}, their {@link FilterMeta.Stage#setBits} known: if one is not
     * recorded (metadata format 2 or older), one scan of the slot's pages counts them all, and the
     * metadata records them.
     */
    private List<FilterMeta.Stage> setBitsOf(FilterMeta meta, int slot) throws Exception {
        List<FilterMeta.Stage> stages = meta.slots.get(slot);
        boolean known = true;
        for (FilterMeta.Stage s : stages) {
            known &= s.setBits != FilterMeta.UNKNOWN_SET_BITS;
        }
        if (known) {
            return stages;
        }
        long[] counted = new long[stages.size()];
        for (Map.Entry<Long, long[]> e : pages.entries()) {
            long k = e.getKey();
            if (StateLayout.slotOf(k) == slot) {
                counted[StateLayout.stageOf(k)] += Pages.bitCount(e.getValue());
            }
        }
        for (int i = 0; i < counted.length; i++) {
            stages.get(i).setBits = counted[i];
        }
        metaState.update(meta);
        return stages;
    }

    /**
     * Frees {@code window}'s filter; clears the key's state when nothing is left.
     *
     * @return whether the key has no state left
     */
    boolean free(long window) throws Exception {
        FilterMeta meta = metaState.value();
        if (meta == null) {
            return true;
        }
        int slot = slotOf(meta, window);
        if (meta.buckets[slot] != window) {
            return false;
        }
        Iterator<Long> keys = pages.keys().iterator();
        while (keys.hasNext()) {
            if (StateLayout.slotOf(keys.next()) == slot) {
                keys.remove();
            }
        }
        for (FilterMeta.Stage s : meta.slots.get(slot)) {
            if (s.pages != FilterMeta.UNKNOWN_PAGES) {
                pagesHeld = Math.max(0, pagesHeld - s.pages);
            }
        }
        meta.buckets[slot] = FilterMeta.EMPTY;
        meta.slots.get(slot).clear();
        for (long b : meta.buckets) {
            if (b != FilterMeta.EMPTY) {
                metaState.update(meta);
                return false;
            }
        }
        metaState.clear();
        pages.clear();
        return true;
    }
}
