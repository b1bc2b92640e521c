package io.bloomstream.table;

import io.bloomstream.filter.CounterPages;
import io.bloomstream.filter.FilterSpec;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * One operation on the counters of a counting {@link BloomAccumulator} (layout {@value
 * BloomAccumulator#VERSION_2_COUNTING}): the pages it reads and changes, each read once and written
 * back once by {@link #flush} (removed if no counter is left), and the counter arithmetic on them.
 * Page key p in [0, pages) holds the page's counters in the layout of {@link CounterPages} (4, 8 or
 * 16 bits, from the value's length); key {@link #pendingKey pendingKey(p)} = {@code -1 - p} the
 * page's pending retractions, in the same layout. A counter widens its page when it passes the
 * width's maximum and sticks at {@link CounterPages#STICKY}; no counter goes below zero. The
 * accumulator's {@link BloomAccumulator#setBits} (counters P above zero) and {@link
 * BloomAccumulator#itemsAdded} follow each change.
 */
final class CounterEdit {

    private final BloomAccumulator acc;
    private final FilterSpec spec;
    private final Map<Long, long[]> words = new HashMap<>();
    private final Set<Long> stored = new HashSet<>();

    CounterEdit(BloomAccumulator acc) {
        this.acc = acc;
        this.spec = acc.spec();
    }

    /** The counters under {@code key}: as changed by this operation, else as stored, else empty. */
    long[] get(long key) throws Exception {
        long[] w = words.get(key);
        if (w == null) {
            w = acc.pages.get(key);
            if (w == null) {
                w = CounterPages.empty(spec);
            } else {
                stored.add(key);
            }
            words.put(key, w);
        }
        return w;
    }

    /** Replaces the counters under {@code key} (a page widened, or emptied). */
    void set(long key, long[] w) {
        words.put(key, w);
    }

    /** Writes back every page read: those with a counter left, and removes the stored others. */
    void flush() throws Exception {
        for (Map.Entry<Long, long[]> e : words.entrySet()) {
            if (!CounterPages.isEmpty(e.getValue())) {
                acc.pages.put(e.getKey(), e.getValue());
            } else if (stored.contains(e.getKey())) {
                acc.pages.remove(e.getKey());
            }
        }
    }

    private long[] positions(long h1, long h2) {
        long[] scratch = acc.scratch();
        spec.positions(h1, h2, scratch);
        return scratch;
    }

    /** Adds one occurrence of (h1, h2) to the counters: widening, sticky at the widest. */
    void add(long h1, long h2) throws Exception {
        long page = spec.page(h1);
        long[] words = get(page);
        long[] pos = positions(h1, h2);
        int width = CounterPages.width(spec, words);
        int newly = 0;
        for (int i = 0, k = spec.hashes(); i < k; i++) {
            int c = CounterPages.get(words, width, pos[i]);
            if (c == CounterPages.max(width)) {
                if (width == CounterPages.MAX_WIDTH) {
                    continue; // sticky
                }
                words = CounterPages.widen(words, width);
                width *= 2;
                set(page, words);
            }
            if (c == 0) {
                newly++;
            }
            CounterPages.set(words, width, pos[i], c + 1);
        }
        acc.setBits += newly;
        acc.addItems(1);
    }

    /**
     * Removes one occurrence of (h1, h2): decrements its counters if all are above zero (a sticky
     * one stays), else adds it to the page's pending retractions.
     */
    void retract(long h1, long h2) throws Exception {
        long page = spec.page(h1);
        long[] pos = positions(h1, h2);
        int k = spec.hashes();
        long[] words = get(page);
        int width = CounterPages.width(spec, words);
        boolean present = true;
        for (int i = 0; i < k && present; i++) {
            present = CounterPages.get(words, width, pos[i]) > 0;
        }
        if (present) {
            int cleared = 0;
            for (int i = 0; i < k; i++) {
                int c = CounterPages.get(words, width, pos[i]);
                // 0 only when a false positive repeats a position: never below zero
                if (c == 0 || (width == CounterPages.MAX_WIDTH && c == CounterPages.STICKY)) {
                    continue;
                }
                CounterPages.set(words, width, pos[i], c - 1);
                if (c == 1) {
                    cleared++;
                }
            }
            acc.setBits -= cleared;
            acc.itemsAdded = Math.max(0, acc.itemsAdded() - 1);
            return;
        }
        long key = pendingKey(page);
        long[] pending = get(key);
        for (int i = 0; i < k; i++) {
            long[] after = addTo(spec, pending, pos[i], 1);
            if (after != pending) {
                pending = after;
                set(key, pending);
            }
        }
    }

    /** Applies the logged adds {@code adds}, then the logged retractions (either may be null). */
    void replay(long[] adds, long[] retractions) throws Exception {
        if (adds != null) {
            for (int i = 0, n = (int) adds[0]; i < n; i++) {
                add(adds[1 + 2 * i], adds[2 + 2 * i]);
            }
        }
        if (retractions != null) {
            for (int i = 0, n = (int) retractions[0]; i < n; i++) {
                retract(retractions[1 + 2 * i], retractions[2 + 2 * i]);
            }
        }
    }

    /** The key of page {@code page}'s pending retractions. */
    static long pendingKey(long page) {
        return -1 - page;
    }

    /**
     * Adds {@code n} to the counter at {@code cell} of {@code words}, widening the page as needed
     * and sticking at {@link CounterPages#STICKY}; returns the page (a new array if widened).
     */
    private static long[] addTo(FilterSpec s, long[] words, long cell, int n) {
        int width = CounterPages.width(s, words);
        int c = CounterPages.get(words, width, cell);
        if (width == CounterPages.MAX_WIDTH && c == CounterPages.STICKY) {
            return words;
        }
        int sum = (int) Math.min((long) c + n, CounterPages.STICKY);
        while (sum > CounterPages.max(width)) {
            words = CounterPages.widen(words, width);
            width *= 2;
        }
        CounterPages.set(words, width, cell, sum);
        return words;
    }

    /**
     * Adds the counters {@code theirs} (of a page, or pending retractions) to these under {@code
     * page}; returns how many of these went from zero to above. A sticky counter of {@code theirs}
     * makes the sum sticky.
     */
    int sum(long page, long[] theirs) throws Exception {
        int tw = CounterPages.width(spec, theirs);
        long[] mine = get(page);
        int newly = 0;
        int perWord = 64 / tw;
        for (int w = 0; w < theirs.length; w++) {
            if (theirs[w] == 0) {
                continue;
            }
            for (long cell = (long) w * perWord, end = cell + perWord; cell < end; cell++) {
                int v = CounterPages.get(theirs, tw, cell);
                if (v == 0) {
                    continue;
                }
                int mw = CounterPages.width(spec, mine);
                if (CounterPages.get(mine, mw, cell) == 0) {
                    newly++;
                }
                boolean sticky = tw == CounterPages.MAX_WIDTH && v == CounterPages.STICKY;
                long[] after = addTo(spec, mine, cell, sticky ? CounterPages.STICKY : v);
                if (after != mine) {
                    mine = after;
                    set(page, mine);
                }
            }
        }
        return newly;
    }

    /**
     * Cancels the pending retractions {@code theirs} of page {@code page} against its counters
     * (never below zero, a sticky counter absorbs them); what they cannot cancel stays pending
     * under the page's {@link #pendingKey}. The set-bit count loses the counters that reach zero.
     */
    void cancel(long page, long[] theirs) throws Exception {
        int tw = CounterPages.width(spec, theirs);
        long[] mine = get(page);
        int mw = CounterPages.width(spec, mine);
        long[] left = null;
        int cleared = 0;
        int perWord = 64 / tw;
        for (int w = 0; w < theirs.length; w++) {
            if (theirs[w] == 0) {
                continue;
            }
            for (long cell = (long) w * perWord, end = cell + perWord; cell < end; cell++) {
                int r = CounterPages.get(theirs, tw, cell);
                if (r == 0) {
                    continue;
                }
                int c = CounterPages.get(mine, mw, cell);
                if (mw == CounterPages.MAX_WIDTH && c == CounterPages.STICKY) {
                    continue; // a sticky counter absorbs it
                }
                int d = Math.min(c, r);
                if (d > 0) {
                    CounterPages.set(mine, mw, cell, c - d);
                    if (c == d) {
                        cleared++;
                    }
                }
                if (r > d) {
                    if (left == null) {
                        left = get(pendingKey(page));
                    }
                    long[] after = addTo(spec, left, cell, r - d);
                    if (after != left) {
                        left = after;
                        set(pendingKey(page), left);
                    }
                }
            }
        }
        acc.setBits -= cleared;
    }
}
