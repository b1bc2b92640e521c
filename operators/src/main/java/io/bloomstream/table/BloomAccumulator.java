package io.bloomstream.table;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.CounterPages;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import io.bloomstream.table.internal.SqlArguments;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.types.DataType;

/**
 * The accumulator of {@code BLOOM_COUNT_DISTINCT}, {@code BLOOM_BUILD} and {@code BLOOM_UNION}: one
 * Bloom filter in the paged layout of the DataStream operators, its non-empty pages in a {@link
 * MapView} (one state entry per page: a row reads and writes one entry, whatever the filter's size)
 * and its shape, set-bit count and items added in plain fields.
 *
 * <p>The set-bit count X is kept as pages change, so an estimate (n = m ln(m / (m - X)) / k, {@link
 * io.bloomstream.filter.Estimate}) reads no page. The shape is decided by the first row (or the
 * first filter, for a union) and never changes; a row or accumulator of another shape is an error.
 *
 * <p>State layouts (a contract; the number is in {@link #layout}), both the fields of {@link
 * #dataType()} in that order, {@code bits == 0} meaning "no shape yet" (no row seen):
 *
 * <ul>
 *   <li>{@value #VERSION_1}, plain (bloomstream 0.4 on; every function but the counting form): page
 *       keys are page indexes in [0, pages), values {@link Pages#words(FilterSpec)} words of bits;
 *       {@link #setBits} counts the set bits.
 *   <li>{@value #VERSION_2_COUNTING}, counting ({@code BLOOM_COUNT_DISTINCT(..., 'retract')},
 *       bloomstream 0.5): page key p in [0, pages) holds the page's counters P in the layout of
 *       {@link CounterPages} (4, 8 or 16 bits, from the value's length); key {@code -1 - p} holds
 *       retractions of page p still pending (M, same layout): retractions of values this
 *       accumulator never saw, which a merge into an accumulator that saw them cancels. {@link
 *       #setBits} counts the counters P above zero; {@link #itemsAdded} is the adds less the
 *       retractions matched, never below zero. Keys {@link #ADD_LOG} and {@link #RETRACT_LOG} hold
 *       rows an accumulator in memory logged and has not applied yet ({@code [n, h1, h2, ...]});
 *       Flink keeps accumulators in state with state-backed views, which apply each row at once, so
 *       state holds them only if Flink ever stores an accumulator in memory whole: they are
 *       applied, adds first, where the accumulator is merged or read.
 * </ul>
 *
 * <p>It is {@code @PublicEvolving} because it stands in the public methods that Flink calls on the
 * aggregate functions ({@code createAccumulator}, {@code accumulate}, {@code merge}): users never
 * build or read one. Its name and package are written into the aggregates' state, so it never
 * moves.
 */
@PublicEvolving
public class BloomAccumulator {

    /** The SQL accumulator layout of bloomstream 0.4 on: the fields of the data type below. */
    public static final int VERSION_1 = 1;

    /**
     * The version of the layout written now (the <em>SQL accumulator layout</em>, counted apart
     * from every other versioned artefact: docs/state.md); a changed layout gets a new number.
     */
    public static final int LAYOUT_VERSION = VERSION_1;

    /**
     * The counting layout of {@code BLOOM_COUNT_DISTINCT(..., 'retract')} (bloomstream 0.5): the
     * same fields, counters in the pages (see the class comment).
     */
    public static final int VERSION_2_COUNTING = 2;

    /** The layout of this accumulator (0 before the shape is set). */
    public int layout;

    /** m, or 0 while the filter has no shape. */
    public long bits;

    /** k. */
    public int hashes;

    /** The page size in bits ({@link FilterSpec#CLASSIC} for one page). */
    public int pageBits;

    /** {@link HashStrategy#id()} of the hasher. */
    public int strategy;

    /** The hasher's seed ({@link Hasher#seed()}). */
    public long seed;

    /** {@link io.bloomstream.filter.Normalization#id()} recorded by the filters united, 0 none. */
    public int normalization;

    /** X, the number of set bits over all pages. */
    public long setBits;

    /**
     * The items (or, for a union, the filters' items) taken as new, saturating at {@code
     * Long.MAX_VALUE} ({@link #addItems}): never negative in state written by this release.
     */
    public long itemsAdded;

    /** The non-empty pages by index. */
    public MapView<Long, long[]> pages = new MapView<>();

    private transient FilterSpec spec;
    private transient long[] scratch;

    /** The accumulator's data type: explicit, so no field is ever a generic (Kryo) type. */
    static DataType dataType() {
        return DataTypes.STRUCTURED(
                BloomAccumulator.class,
                DataTypes.FIELD("layout", DataTypes.INT().notNull()),
                DataTypes.FIELD("bits", DataTypes.BIGINT().notNull()),
                DataTypes.FIELD("hashes", DataTypes.INT().notNull()),
                DataTypes.FIELD("pageBits", DataTypes.INT().notNull()),
                DataTypes.FIELD("strategy", DataTypes.INT().notNull()),
                DataTypes.FIELD("seed", DataTypes.BIGINT().notNull()),
                DataTypes.FIELD("normalization", DataTypes.INT().notNull()),
                DataTypes.FIELD("setBits", DataTypes.BIGINT().notNull()),
                DataTypes.FIELD("itemsAdded", DataTypes.BIGINT().notNull()),
                DataTypes.FIELD(
                        "pages",
                        MapView.newMapViewDataType(
                                DataTypes.BIGINT().notNull(),
                                DataTypes.ARRAY(DataTypes.BIGINT().notNull())
                                        .bridgedTo(long[].class))));
    }

    /** Whether the filter has a shape (a row was seen). */
    boolean hasShape() {
        return bits != 0;
    }

    /**
     * The filter's shape.
     *
     * @throws IllegalStateException if it has none yet, or the stored layout is unknown
     */
    FilterSpec spec() {
        if (spec == null) {
            if (!hasShape()) {
                throw new IllegalStateException("the filter has no shape yet");
            }
            if (layout != VERSION_1 && layout != VERSION_2_COUNTING) {
                throw new IllegalStateException(
                        "accumulator state of SQL accumulator layout "
                                + layout
                                + ", this release reads "
                                + VERSION_1
                                + " and "
                                + VERSION_2_COUNTING);
            }
            HashStrategy s = HashStrategy.fromId(strategy);
            Hasher hasher =
                    s == HashStrategy.XXH3_64
                            ? Hasher.xxh3_64(seed)
                            : s == HashStrategy.XXH3_128 ? Hasher.xxh3(seed) : unsupported(s);
            spec = FilterSpec.of(bits, hashes, pageBits, hasher);
        }
        return spec;
    }

    private static Hasher unsupported(HashStrategy s) {
        throw new IllegalArgumentException(
                "filters of keyed hash strategy " + s + " cannot be used in SQL: no key");
    }

    /**
     * The {@code accumulate} of the aggregates that build a filter: fixes the shape for {@code
     * expectedItems} at {@code fpp} (from {@code specs}) and adds {@code value} (NULL: ignored).
     */
    void accumulate(
            SqlArguments.SpecCache specs,
            String function,
            Object value,
            Long expectedItems,
            Double fpp)
            throws Exception {
        FilterSpec spec = shapeFor(specs, function, expectedItems, fpp, VERSION_1);
        if (value == null) {
            return;
        }
        io.bloomstream.filter.Hash128 h = SqlArguments.hash(spec.hasher(), value);
        add(h.h1(), h.h2());
    }

    /**
     * The {@code accumulate} of the counting form: fixes the shape (layout {@value
     * #VERSION_2_COUNTING}) and adds one occurrence of {@code value} (NULL: ignored).
     */
    void accumulateCounting(
            SqlArguments.SpecCache specs,
            String function,
            Object value,
            Long expectedItems,
            Double fpp)
            throws Exception {
        count(specs, function, value, expectedItems, fpp, true);
    }

    /**
     * The {@code retract} of the counting form: removes one occurrence of {@code value} (NULL:
     * ignored). If every counter of the value is above zero, each is decremented (a sticky one
     * stays); otherwise this accumulator certainly never saw the value (a local accumulator of
     * two-phase aggregation, a window slice): the retraction is kept pending and cancels the
     * value's counters when this accumulator is merged into one that has them. No counter goes
     * below zero.
     */
    void retractCounting(
            SqlArguments.SpecCache specs,
            String function,
            Object value,
            Long expectedItems,
            Double fpp)
            throws Exception {
        count(specs, function, value, expectedItems, fpp, false);
    }

    private void count(
            SqlArguments.SpecCache specs,
            String function,
            Object value,
            Long expectedItems,
            Double fpp,
            boolean add)
            throws Exception {
        FilterSpec spec = shapeFor(specs, function, expectedItems, fpp, VERSION_2_COUNTING);
        if (value == null) {
            return;
        }
        io.bloomstream.filter.Hash128 h = SqlArguments.hash(spec.hasher(), value);
        if (add) {
            increment(h.h1(), h.h2());
        } else {
            decrement(h.h1(), h.h2());
        }
    }

    private FilterSpec shapeFor(
            SqlArguments.SpecCache specs,
            String function,
            Long expectedItems,
            Double fpp,
            int layout) {
        FilterSpec spec = specs.get(expectedItems, fpp);
        // checked once per accumulator object and spec, not per row
        if (this.spec != spec || this.layout != layout) {
            shape(
                    spec,
                    layout,
                    function + "(expected_items=" + expectedItems + ", fpp=" + fpp + ")");
        }
        return spec;
    }

    /** The {@code merge} of the aggregates: ORs every filter of {@code others} into this one. */
    void mergeAll(Iterable<BloomAccumulator> others, String function) throws Exception {
        for (BloomAccumulator other : others) {
            merge(other, function);
        }
    }

    /**
     * Gives the filter {@code wanted}'s shape if it has none; otherwise checks that it has that
     * shape (field by field, without building a spec, as this runs once a row).
     *
     * @param what names where {@code wanted} comes from, for the error
     * @throws IllegalArgumentException naming both shapes if they differ
     */
    void shape(FilterSpec wanted, String what) {
        shape(wanted, VERSION_1, what);
    }

    /** {@link #shape(FilterSpec, String)} for the layout {@code wantedLayout}. */
    void shape(FilterSpec wanted, int wantedLayout, String what) {
        if (!hasShape()) {
            layout = wantedLayout;
            bits = wanted.bits();
            hashes = wanted.hashes();
            pageBits = wanted.pageBits();
            strategy = wanted.hasher().strategy().id();
            seed = wanted.hasher().seed();
            spec = wanted;
            return;
        }
        if (bits == wanted.bits()
                && hashes == wanted.hashes()
                && pageBits == wanted.pageBits()
                && strategy == wanted.hasher().strategy().id()
                && seed == wanted.hasher().seed()
                && layout == wantedLayout) {
            spec = wanted;
            return;
        }
        if (layout != wantedLayout) {
            throw new IllegalArgumentException(
                    what
                            + " is "
                            + layoutName(wantedLayout)
                            + " but the filter is "
                            + layoutName(layout)
                            + ": the counting form (a 4th argument 'retract') and the plain form"
                            + " never share a filter; a query changed from one to the other"
                            + " starts without state");
        }
        throw new IllegalArgumentException(
                what + " has the shape " + wanted + " but the filter has the shape " + spec());
    }

    private static String layoutName(int layout) {
        return layout == VERSION_2_COUNTING
                ? "counting (layout " + layout + ")"
                : layout == VERSION_1 ? "plain (layout 1)" : "of unknown layout " + layout;
    }

    /** Whether this accumulator keeps counters (layout {@value #VERSION_2_COUNTING}). */
    boolean isCounting() {
        return layout == VERSION_2_COUNTING;
    }

    /** The estimate from the set-bit count alone (no page read); see {@link #hasShape()}. */
    io.bloomstream.filter.Estimate estimate() {
        return io.bloomstream.filter.Estimate.of(
                setBits, bits, hashes, pageBits == FilterSpec.CLASSIC ? bits : pageBits);
    }

    /**
     * Adds an item with the hash (h1, h2): one page read and, if a bit changed, written. The
     * set-bit count grows by the bits the item set (no scan of the page).
     */
    void add(long h1, long h2) throws Exception {
        FilterSpec s = spec();
        if (scratch == null) {
            scratch = new long[Sizing.MAX_HASHES];
        }
        long page = s.page(h1);
        long[] words = pages.get(page);
        if (words == null) {
            words = new long[Pages.words(s)];
        }
        int newBits = Pages.addCounting(s, words, h1, h2, scratch);
        if (newBits > 0) {
            setBits += newBits;
            addItems(1);
            pages.put(page, words);
        }
    }

    /** ORs {@code words} into page {@code page}; keeps the set-bit count. */
    void orPage(long page, long[] words) throws Exception {
        long[] mine = pages.get(page);
        if (mine == null) {
            int n = Pages.bitCount(words);
            if (n > 0) {
                pages.put(page, words.clone());
                setBits += n;
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
            setBits += added;
            pages.put(page, mine);
        }
    }

    /**
     * ORs another accumulator into this one (windows, two-phase aggregation).
     *
     * @throws IllegalArgumentException naming both shapes if they differ
     */
    void merge(BloomAccumulator other, String function) throws Exception {
        if (!other.hasShape()) {
            return;
        }
        shape(other.spec(), other.layout, function + ": an accumulator to merge");
        if (isCounting()) {
            mergeCounting(other);
            return;
        }
        mergeNormalization(other.normalization, function);
        for (Map.Entry<Long, long[]> e : other.pages.entries()) {
            orPage(e.getKey(), e.getValue());
        }
        addItems(other.itemsAdded());
    }

    /**
     * Adds {@code items} to {@link #itemsAdded}, saturating at {@code Long.MAX_VALUE}: the count is
     * an upper bound of the distinct items, and stays one. A negative count (one wrapped by an
     * earlier release that did not saturate) counts as saturated.
     */
    void addItems(long items) {
        long sum = itemsAdded() + (items < 0 ? Long.MAX_VALUE : items);
        itemsAdded = sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** {@link #itemsAdded}, with a wrapped (negative) count read as saturated. */
    private long itemsAdded() {
        return itemsAdded < 0 ? Long.MAX_VALUE : itemsAdded;
    }

    /** Records the normalization of united filters; filters of different ones do not mix. */
    void mergeNormalization(int id, String function) {
        if (id == normalization) {
            return;
        }
        if (normalization == 0 && setBits == 0 && itemsAdded == 0) {
            normalization = id;
            return;
        }
        throw new IllegalArgumentException(
                function
                        + ": filters built with different normalizations ("
                        + name(normalization)
                        + " vs "
                        + name(id)
                        + ") cannot be united: their entries never match");
    }

    private static String name(int id) {
        return id == 0
                ? "none recorded"
                : io.bloomstream.filter.Normalization.fromId(id).toString();
    }

    /** The filter as a library {@link BloomFilter} (reads every page). */
    BloomFilter toFilter() throws Exception {
        if (isCounting()) {
            throw new IllegalStateException("a counting accumulator is not a filter of bits");
        }
        return BloomFilter.fromPages(spec(), itemsAdded(), pages.entries());
    }

    // ---- the counting layout (VERSION_2_COUNTING) ----

    /**
     * The key of the adds an accumulator in memory logged and has not applied yet: {@code [n, h1,
     * h2, h1, h2, ...]}, n items' hashes.
     */
    static final long ADD_LOG = Long.MIN_VALUE;

    /** The key of the retractions logged, as {@link #ADD_LOG}. */
    static final long RETRACT_LOG = Long.MIN_VALUE + 1;

    /** The items a log holds before the accumulator applies it to its own counters. */
    static final int LOG_LIMIT = 4096;

    /**
     * Whether the pages are in memory (a {@code MapView} of Flink's own class, as in the local
     * accumulators of two-phase aggregation and in batch) rather than in state: then adds and
     * retractions are logged as hashes (16 bytes each instead of a page of counters shipped to the
     * global aggregation) and applied where the accumulator is merged.
     */
    private boolean inMemory() {
        return pages.getClass() == MapView.class;
    }

    private long[] positions(FilterSpec s, long h1, long h2) {
        if (scratch == null) {
            scratch = new long[Sizing.MAX_HASHES];
        }
        s.positions(h1, h2, scratch);
        return scratch;
    }

    /** Adds one occurrence of the item (h1, h2): logged in memory, applied in state. */
    private void increment(long h1, long h2) throws Exception {
        if (inMemory()) {
            log(ADD_LOG, h1, h2);
            return;
        }
        Touched t = new Touched(spec());
        applyAdd(t, h1, h2);
        t.flush();
    }

    /** Removes one occurrence of the item (h1, h2); see {@link #retractCounting}. */
    private void decrement(long h1, long h2) throws Exception {
        if (inMemory()) {
            log(RETRACT_LOG, h1, h2);
            return;
        }
        Touched t = new Touched(spec());
        applyRetract(t, h1, h2);
        t.flush();
    }

    private void log(long key, long h1, long h2) throws Exception {
        long[] log = pages.get(key);
        int n = log == null ? 0 : (int) log[0];
        if (log == null || log.length < 3 + 2 * n) {
            long[] grown = new long[Math.max(33, 2 * (1 + 2 * n) + 1)];
            if (log != null) {
                System.arraycopy(log, 0, grown, 0, 1 + 2 * n);
            }
            log = grown;
            pages.put(key, log);
        }
        log[1 + 2 * n] = h1;
        log[2 + 2 * n] = h2;
        log[0] = n + 1;
        if (n + 1 >= LOG_LIMIT) {
            applyLogs();
        }
    }

    /**
     * Applies the logged adds, then the logged retractions, to this accumulator's counters, then
     * cancels its pending retractions against them (an accumulator in memory, before its estimate
     * is read or when a log is full). Adds first: in a legal changelog every retraction still finds
     * its value.
     */
    void applyLogs() throws Exception {
        if (!isCounting() || !inMemory()) {
            return;
        }
        long[] adds = pages.get(ADD_LOG);
        long[] retractions = pages.get(RETRACT_LOG);
        if (adds != null || retractions != null) {
            pages.remove(ADD_LOG);
            pages.remove(RETRACT_LOG);
            Touched t = new Touched(spec());
            replay(t, adds, retractions);
            t.flush();
        }
        cancelOwnPending();
    }

    private void replay(Touched t, long[] adds, long[] retractions) throws Exception {
        if (adds != null) {
            for (int i = 0, n = (int) adds[0]; i < n; i++) {
                applyAdd(t, adds[1 + 2 * i], adds[2 + 2 * i]);
            }
        }
        if (retractions != null) {
            for (int i = 0, n = (int) retractions[0]; i < n; i++) {
                applyRetract(t, retractions[1 + 2 * i], retractions[2 + 2 * i]);
            }
        }
    }

    /**
     * The pages one operation reads and changes, each read once and written back once by {@link
     * #flush} (removed if no counter is left).
     */
    private final class Touched {
        private final FilterSpec spec;
        private final Map<Long, long[]> words = new HashMap<>();
        private final Set<Long> stored = new HashSet<>();

        Touched(FilterSpec spec) {
            this.spec = spec;
        }

        long[] get(long key) throws Exception {
            long[] w = words.get(key);
            if (w == null) {
                w = pages.get(key);
                if (w == null) {
                    w = CounterPages.empty(spec);
                } else {
                    stored.add(key);
                }
                words.put(key, w);
            }
            return w;
        }

        void set(long key, long[] w) {
            words.put(key, w);
        }

        void flush() throws Exception {
            for (Map.Entry<Long, long[]> e : words.entrySet()) {
                if (!CounterPages.isEmpty(e.getValue())) {
                    pages.put(e.getKey(), e.getValue());
                } else if (stored.contains(e.getKey())) {
                    pages.remove(e.getKey());
                }
            }
        }
    }

    /** Adds one occurrence of (h1, h2) to the counters: widening, sticky at the widest. */
    private void applyAdd(Touched t, long h1, long h2) throws Exception {
        FilterSpec s = t.spec;
        long page = s.page(h1);
        long[] words = t.get(page);
        long[] pos = positions(s, h1, h2);
        int width = CounterPages.width(s, words);
        int newly = 0;
        for (int i = 0, k = s.hashes(); i < k; i++) {
            int c = CounterPages.get(words, width, pos[i]);
            if (c == CounterPages.max(width)) {
                if (width == CounterPages.MAX_WIDTH) {
                    continue; // sticky
                }
                words = CounterPages.widen(words, width);
                width *= 2;
                t.set(page, words);
            }
            if (c == 0) {
                newly++;
            }
            CounterPages.set(words, width, pos[i], c + 1);
        }
        setBits += newly;
        addItems(1);
    }

    /**
     * Removes one occurrence of (h1, h2): decrements its counters if all are above zero (a sticky
     * one stays), else adds it to the page's pending retractions.
     */
    private void applyRetract(Touched t, long h1, long h2) throws Exception {
        FilterSpec s = t.spec;
        long page = s.page(h1);
        long[] pos = positions(s, h1, h2);
        int k = s.hashes();
        long[] words = t.get(page);
        int width = CounterPages.width(s, words);
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
            setBits -= cleared;
            itemsAdded = Math.max(0, itemsAdded() - 1);
            return;
        }
        long key = pendingKey(page);
        long[] pending = t.get(key);
        for (int i = 0; i < k; i++) {
            long[] after = addTo(s, pending, pos[i], 1);
            if (after != pending) {
                pending = after;
                t.set(key, pending);
            }
        }
    }

    /** The key of page {@code page}'s pending retractions. */
    private static long pendingKey(long page) {
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
     * Merges a counting accumulator into this one. Into state: adds its counters and its logged
     * adds to this one's, then lets its pending retractions cancel this one's counters (never below
     * zero, a sticky counter stays; what they cannot cancel stays pending here), then applies its
     * logged retractions: every positive before any negative, so in a legal changelog each
     * retraction finds its value. In memory: adds its counters to this one's and its pending
     * retractions to this one's pending ones, and appends its logs to this one's. A sticky counter
     * of {@code other} makes the sum sticky.
     */
    private void mergeCounting(BloomAccumulator other) throws Exception {
        FilterSpec s = spec();
        Touched t = new Touched(s);
        List<Map.Entry<Long, long[]>> retractions = new ArrayList<>();
        long[] addLog = null;
        long[] retractLog = null;
        for (Map.Entry<Long, long[]> e : other.pages.entries()) {
            long key = e.getKey();
            if (key == ADD_LOG) {
                addLog = e.getValue();
            } else if (key == RETRACT_LOG) {
                retractLog = e.getValue();
            } else if (key < 0) {
                retractions.add(e);
            } else {
                setBits += sum(t, key, e.getValue());
            }
        }
        addItems(other.itemsAdded());
        if (inMemory()) {
            // positives and negatives kept apart until the merge into state, which applies every
            // positive first: a pending retraction may wait for an add still in a log
            for (Map.Entry<Long, long[]> e : retractions) {
                sum(t, e.getKey(), e.getValue()); // counts no set bit: pending
            }
            t.flush();
            append(ADD_LOG, addLog);
            append(RETRACT_LOG, retractLog);
            return;
        }
        if (addLog != null) {
            replay(t, addLog, null);
        }
        for (Map.Entry<Long, long[]> e : retractions) {
            cancel(t, -1 - e.getKey(), e.getValue());
        }
        if (retractLog != null) {
            replay(t, null, retractLog);
        }
        t.flush();
    }

    /** Appends another accumulator's log to this one's (in memory). */
    private void append(long key, long[] theirs) throws Exception {
        if (theirs == null) {
            return;
        }
        for (int i = 0, n = (int) theirs[0]; i < n; i++) {
            log(key, theirs[1 + 2 * i], theirs[2 + 2 * i]);
        }
    }

    /**
     * Cancels this accumulator's own pending retractions against its own counters (in memory,
     * before its estimate is read): the difference of the two, cell by cell, does not change.
     */
    private void cancelOwnPending() throws Exception {
        List<Long> keys = new ArrayList<>();
        for (long key : pages.keys()) {
            if (key < 0 && key != ADD_LOG && key != RETRACT_LOG) {
                keys.add(key);
            }
        }
        if (keys.isEmpty()) {
            return;
        }
        FilterSpec s = spec();
        Touched t = new Touched(s);
        for (long key : keys) {
            long[] pending = t.get(key);
            t.set(key, CounterPages.empty(s)); // what the counters cannot cancel comes back
            cancel(t, -1 - key, pending);
        }
        t.flush();
    }

    /**
     * Adds the counters {@code theirs} (of a page, or pending retractions) to this one's under
     * {@code page}; returns how many of this one's went from zero to above.
     */
    private int sum(Touched t, long page, long[] theirs) throws Exception {
        FilterSpec s = t.spec;
        int tw = CounterPages.width(s, theirs);
        long[] mine = t.get(page);
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
                int mw = CounterPages.width(s, mine);
                if (CounterPages.get(mine, mw, cell) == 0) {
                    newly++;
                }
                boolean sticky = tw == CounterPages.MAX_WIDTH && v == CounterPages.STICKY;
                long[] after = addTo(s, mine, cell, sticky ? CounterPages.STICKY : v);
                if (after != mine) {
                    mine = after;
                    t.set(page, mine);
                }
            }
        }
        return newly;
    }

    /** Cancels the pending retractions {@code theirs} of page {@code page} against its counters. */
    private void cancel(Touched t, long page, long[] theirs) throws Exception {
        FilterSpec s = t.spec;
        int tw = CounterPages.width(s, theirs);
        long[] mine = t.get(page);
        int mw = CounterPages.width(s, mine);
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
                        left = t.get(pendingKey(page));
                    }
                    long[] after = addTo(s, left, cell, r - d);
                    if (after != left) {
                        left = after;
                        t.set(pendingKey(page), left);
                    }
                }
            }
        }
        setBits -= cleared;
    }
}
