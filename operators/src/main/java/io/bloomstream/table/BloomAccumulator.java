package io.bloomstream.table;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.Sizing;
import io.bloomstream.table.internal.SqlArguments;
import java.util.Map;
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
 * <p>State layout (a contract: version {@value #LAYOUT_VERSION}): the fields of {@link #dataType()}
 * in that order; page keys are page indexes in [0, pages), values {@link Pages#words(FilterSpec)}
 * words. {@code bits == 0} means "no shape yet" (no row seen).
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

    /** {@link #LAYOUT_VERSION} of this accumulator (0 before the shape is set). */
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
            if (layout != LAYOUT_VERSION) {
                throw new IllegalStateException(
                        "accumulator state of SQL accumulator layout "
                                + layout
                                + ", this release reads "
                                + LAYOUT_VERSION);
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
        FilterSpec spec = specs.get(expectedItems, fpp);
        if (this.spec != spec) { // checked once per accumulator object and spec, not per row
            shape(spec, function + "(expected_items=" + expectedItems + ", fpp=" + fpp + ")");
        }
        if (value == null) {
            return;
        }
        io.bloomstream.filter.Hash128 h = SqlArguments.hash(spec.hasher(), value);
        add(h.h1(), h.h2());
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
        if (!hasShape()) {
            layout = LAYOUT_VERSION;
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
                && layout == LAYOUT_VERSION) {
            spec = wanted;
            return;
        }
        throw new IllegalArgumentException(
                what + " has the shape " + wanted + " but the filter has the shape " + spec());
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
        shape(other.spec(), function + ": an accumulator to merge");
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
        return BloomFilter.fromPages(spec(), itemsAdded(), pages.entries());
    }
}
