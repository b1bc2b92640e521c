package io.bloomstream.table;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.CounterPages;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import io.bloomstream.table.internal.SqlArguments;
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
 * <p>This class is the state the planner sees (its fields, {@link #dataType()}), the shape and the
 * counts shared by both layouts; the work of each layout is in its own class: {@link PlainPages}
 * (layout {@value #VERSION_1}) and {@link CountingPages} with {@link CounterEdit} (layout {@value
 * #VERSION_2_COUNTING}).
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

    /** The non-empty pages by index (and, in the counting layout, the keys below zero). */
    public MapView<Long, long[]> pages = new MapView<>();

    /**
     * The key of the adds a counting accumulator in memory logged and has not applied yet: {@code
     * [n, h1, h2, h1, h2, ...]}, n items' hashes.
     */
    static final long ADD_LOG = Long.MIN_VALUE;

    /** The key of the retractions logged, as {@link #ADD_LOG}. */
    static final long RETRACT_LOG = Long.MIN_VALUE + 1;

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
            CountingPages.increment(this, h.h1(), h.h2());
        } else {
            CountingPages.decrement(this, h.h1(), h.h2());
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

    /** Adds an item with the hash (h1, h2) to a plain filter ({@link PlainPages#add}). */
    void add(long h1, long h2) throws Exception {
        PlainPages.add(this, h1, h2);
    }

    /** ORs {@code words} into page {@code page} of a plain filter; keeps the set-bit count. */
    void orPage(long page, long[] words) throws Exception {
        PlainPages.orPage(this, page, words);
    }

    /**
     * Merges another accumulator into this one (windows, two-phase aggregation): ORs a plain one
     * ({@link PlainPages#merge}), adds the counters of a counting one ({@link
     * CountingPages#merge}).
     *
     * @throws IllegalArgumentException naming both shapes (or layouts) if they differ
     */
    void merge(BloomAccumulator other, String function) throws Exception {
        if (!other.hasShape()) {
            return;
        }
        shape(other.spec(), other.layout, function + ": an accumulator to merge");
        if (isCounting()) {
            CountingPages.merge(this, other);
        } else {
            PlainPages.merge(this, other, function);
        }
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
    long itemsAdded() {
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
        return PlainPages.toFilter(this);
    }

    /**
     * Applies what a counting accumulator in memory logged ({@link CountingPages#applyLogs}),
     * before its estimate is read; does nothing to a plain accumulator or one in state.
     */
    void applyLogs() throws Exception {
        CountingPages.applyLogs(this);
    }

    /** The scratch array for a row's bit positions, one per accumulator object. */
    long[] scratch() {
        if (scratch == null) {
            scratch = new long[Sizing.MAX_HASHES];
        }
        return scratch;
    }
}
