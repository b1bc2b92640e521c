package io.bloomstream.table;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import io.bloomstream.filter.Pages;
import io.bloomstream.table.internal.FilterValues;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.table.internal.SqlArguments.Arg;
import io.bloomstream.table.internal.SqlArguments.Kind;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.AggregateFunction;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/**
 * {@code BLOOM_UNION(filter)} -> BYTES: the union (bitwise OR) of the group's filters, in the
 * library's binary format: a filter that might contain exactly what any of them might contain.
 *
 * <pre>{@code
 * SELECT BLOOM_UNION(daily) AS weekly FROM daily_filters WHERE day > CURRENT_DATE - 7;
 * }</pre>
 *
 * <p><b>Guarantee.</b> No false negatives: whatever one of the filters might contain, the union
 * might contain. Its false-positive rate is the one of a single filter holding all their items (so
 * size the filters for the union). Its items added are the sum of theirs (an upper bound of the
 * distinct items), saturating at {@code Long.MAX_VALUE} rather than overflowing; {@link
 * EstimateScalarFunction BLOOM_ESTIMATE} of the union estimates the distinct items of all filters
 * from its bits.
 *
 * <p>The filters must be Bloom filters (from {@link BuildFilterAggFunction BLOOM_BUILD}, {@code
 * BLOOM_UNION} or {@code build-filter} without {@code --counting}) of one shape (bits, hashes, page
 * size, hash and seed) and one recorded normalization: a filter of another shape or normalization,
 * a counting or scalable filter, or bytes that are not a valid filter fail the query with a message
 * naming the problem (both shapes, for a shape mismatch). NULL filters are ignored; a group of only
 * NULL filters gives NULL.
 */
@PublicEvolving
public class UnionAggFunction extends AggregateFunction<byte[], BloomAccumulator> {

    private static final long serialVersionUID = 1L;

    /** The SQL name. */
    public static final String NAME = "BLOOM_UNION";

    private transient FilterValues filters;
    private transient long[] page;

    @Override
    public BloomAccumulator createAccumulator() {
        return new BloomAccumulator();
    }

    /** ORs {@code filter} (NULL: ignored) into {@code acc}. */
    public void accumulate(BloomAccumulator acc, byte[] filter) throws Exception {
        if (filter == null) {
            return;
        }
        if (filters == null) {
            filters = new FilterValues(NAME);
        }
        FilterValues.Decoded d = filters.get(filter);
        MembershipFilter f = d.file().filter();
        if (!(f instanceof BloomFilter bloom)) {
            throw new IllegalArgumentException(
                    NAME
                            + ": argument 'filter' must be a Bloom filter, was a "
                            + f.getClass().getSimpleName());
        }
        FilterSpec spec = bloom.spec();
        Normalization n = d.file().normalization();
        acc.shape(spec, NAME + ": a filter");
        acc.mergeNormalization(n == null ? 0 : n.id(), NAME);
        int words = Pages.words(spec);
        if (page == null || page.length != words) {
            page = new long[words];
        }
        // Only the non-empty pages: a filter that declares 2^31 pages and holds three costs three.
        for (long p = bloom.nextNonEmptyPage(0); p >= 0; p = bloom.nextNonEmptyPage(p + 1)) {
            bloom.readPage(p, page);
            acc.orPage(p, page);
        }
        acc.addItems(bloom.itemsAdded());
    }

    /** ORs the filters of {@code others} into {@code acc}. */
    public void merge(BloomAccumulator acc, Iterable<BloomAccumulator> others) throws Exception {
        for (BloomAccumulator other : others) {
            acc.merge(other, NAME);
        }
    }

    @Override
    public byte[] getValue(BloomAccumulator acc) {
        if (!acc.hasShape()) {
            return null;
        }
        try {
            BloomFilter f = acc.toFilter();
            return acc.normalization == 0
                    ? FilterCodec.encode(f)
                    : FilterCodec.encode(f, Normalization.fromId(acc.normalization));
        } catch (Exception e) {
            throw new IllegalStateException(NAME + ": cannot read the filter's pages", e);
        }
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(SqlArguments.strategy(NAME, 1, new Arg("filter", Kind.FILTER)))
                .accumulatorTypeStrategy(TypeStrategies.explicit(BloomAccumulator.dataType()))
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.BYTES()))
                .build();
    }
}
