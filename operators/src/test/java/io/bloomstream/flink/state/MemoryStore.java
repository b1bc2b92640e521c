package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A {@link FilterStore} of one key in plain maps, counting its calls, for the judge's tests. */
final class MemoryStore implements FilterStore {
    FilterMeta meta;
    final Map<Long, long[]> pages = new HashMap<>();
    int metaWrites;
    int countsOnlyWrites;
    int pageReads;

    /** Exact mode: each slot's exact entries, and the current event's exact key. */
    final Map<Integer, Set<String>> exact = new HashMap<>();

    String exactKey;
    int exactReads;

    @Override
    public FilterMeta readMeta() {
        return meta;
    }

    @Override
    public void writeMeta(FilterMeta meta, boolean countsOnly) {
        this.meta = meta;
        metaWrites++;
        if (countsOnly) {
            countsOnlyWrites++;
        }
    }

    @Override
    public long[] readPage(int slot, int stage, FilterSpec spec, long page) {
        pageReads++;
        return pages.get(StateLayout.pageKey(slot, stage, page));
    }

    @Override
    public long[] pageToWrite(int slot, int stage, FilterSpec spec, long page, long[] read) {
        return read == null ? new long[Pages.words(spec)] : read.clone();
    }

    @Override
    public void pageWritten(int slot, int stage, FilterSpec spec, long page, long[] words) {
        pages.put(StateLayout.pageKey(slot, stage, page), words);
    }

    @Override
    public boolean exactContains(int slot) {
        exactReads++;
        Set<String> ids = exact.get(slot);
        return ids != null && ids.contains(exactKey);
    }

    @Override
    public void exactAdd(int slot) {
        exact.computeIfAbsent(slot, s -> new HashSet<>()).add(exactKey);
    }

    @Override
    public void dropSlots(long slots) {
        pages.keySet().removeIf(k -> (slots & (1L << StateLayout.slotOf(k))) != 0);
        exact.keySet().removeIf(s -> (slots & (1L << s)) != 0);
    }

    @Override
    public void clear() {
        meta = null;
        pages.clear();
        exact.clear();
    }

    @Override
    public Iterable<Long> pageKeys() {
        return new ArrayList<>(pages.keySet());
    }

    /** The page keys held, for assertions. */
    List<Long> keys() {
        return new ArrayList<>(pages.keySet());
    }
}
