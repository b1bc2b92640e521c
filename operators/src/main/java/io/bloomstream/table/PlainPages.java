package io.bloomstream.table;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Pages;
import java.util.Map;

/**
 * The plain SQL accumulator layout ({@value BloomAccumulator#VERSION_1}) of a {@link
 * BloomAccumulator}: page keys are page indexes in [0, pages), values {@link
 * Pages#words(FilterSpec)} words of bits, and {@link BloomAccumulator#setBits} counts the set bits,
 * kept as pages change (no scan of a page). Stateless: every method works on the accumulator it is
 * given.
 */
final class PlainPages {

    private PlainPages() {}

    /**
     * Adds an item with the hash (h1, h2): one page read and, if a bit changed, written. The
     * set-bit count grows by the bits the item set (no scan of the page).
     */
    static void add(BloomAccumulator acc, long h1, long h2) throws Exception {
        FilterSpec s = acc.spec();
        long page = s.page(h1);
        long[] words = acc.pages.get(page);
        if (words == null) {
            words = new long[Pages.words(s)];
        }
        int newBits = Pages.addCounting(s, words, h1, h2, acc.scratch());
        if (newBits > 0) {
            acc.setBits += newBits;
            acc.addItems(1);
            acc.pages.put(page, words);
        }
    }

    /** ORs {@code words} into page {@code page}; keeps the set-bit count. */
    static void orPage(BloomAccumulator acc, long page, long[] words) throws Exception {
        long[] mine = acc.pages.get(page);
        if (mine == null) {
            int n = Pages.bitCount(words);
            if (n > 0) {
                acc.pages.put(page, words.clone());
                acc.setBits += n;
            }
            return;
        }
        if (mine.length != words.length) {
            throw new IllegalArgumentException(
                    "page " + page + " has " + words.length + " words, expected " + mine.length);
        }
        int added = 0; // bits set in words and clear in mine: one pass, no count of either page
        for (int i = 0; i < mine.length; i++) {
            long w = words[i] & ~mine[i];
            if (w != 0) {
                added += Long.bitCount(w);
                mine[i] |= w;
            }
        }
        if (added > 0) {
            acc.setBits += added;
            acc.pages.put(page, mine);
        }
    }

    /**
     * ORs {@code other} (of the same shape, checked by the caller) into {@code acc}: its
     * normalization, every page and its items.
     *
     * @throws IllegalArgumentException if the two record different normalizations
     */
    static void merge(BloomAccumulator acc, BloomAccumulator other, String function)
            throws Exception {
        acc.mergeNormalization(other.normalization, function);
        for (Map.Entry<Long, long[]> e : other.pages.entries()) {
            orPage(acc, e.getKey(), e.getValue());
        }
        acc.addItems(other.itemsAdded());
    }

    /** The filter as a library {@link BloomFilter} (reads every page). */
    static BloomFilter toFilter(BloomAccumulator acc) throws Exception {
        return BloomFilter.fromPages(acc.spec(), acc.itemsAdded(), acc.pages.entries());
    }
}
