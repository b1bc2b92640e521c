package io.bloomstream.table;

import io.bloomstream.filter.FilterCodec;
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
 * {@code BLOOM_BUILD(value, expected_items, fpp)} -> BYTES: a Bloom filter of the group's non-NULL
 * values, in the library's binary format ({@link FilterCodec}: versioned, checksummed), for {@link
 * MightContainScalarFunction BLOOM_MIGHT_CONTAIN}, {@link EstimateScalarFunction BLOOM_ESTIMATE},
 * {@link UnionAggFunction BLOOM_UNION}, or to store (the bytes are also a valid filter file for the
 * screen and {@code build-filter}'s readers, recording no normalization).
 *
 * <pre>{@code
 * SELECT BLOOM_BUILD(address, 100000, 0.01) AS blocklist FROM blocked;
 * }</pre>
 *
 * <p><b>Guarantee.</b> Every non-NULL value of the group is in the filter (no false negatives); a
 * value not in the group is reported present with about the rate {@code fpp} when the group has
 * expected_items distinct values (less below, more above). Values are hashed by type: a STRING as
 * UTF-8, an integer as its 64-bit value, BYTES as they are; probe with the same type. NULL values
 * are ignored; a group of only NULL values gives an empty filter.
 *
 * <p>Arguments are checked as for {@link CountDistinctAggFunction} (at planning time when literal).
 * The filter is kept in paged state as there, and written out whole on each result: in a streaming
 * {@code GROUP BY} each change of the group emits the whole filter, so prefer a bounded input or a
 * window.
 */
@PublicEvolving
public class BuildFilterAggFunction extends AggregateFunction<byte[], BloomAccumulator> {

    private static final long serialVersionUID = 1L;

    /** The SQL name. */
    public static final String NAME = "BLOOM_BUILD";

    private transient SqlArguments.SpecCache specs;

    @Override
    public BloomAccumulator createAccumulator() {
        return new BloomAccumulator();
    }

    /** Adds {@code value} (NULL: ignored) to a filter for {@code expectedItems} at {@code fpp}. */
    public void accumulate(BloomAccumulator acc, Object value, Long expectedItems, Double fpp)
            throws Exception {
        if (specs == null) {
            specs = new SqlArguments.SpecCache(NAME);
        }
        acc.accumulate(specs, NAME, value, expectedItems, fpp);
    }

    /** ORs the filters of {@code others} into {@code acc}. */
    public void merge(BloomAccumulator acc, Iterable<BloomAccumulator> others) throws Exception {
        acc.mergeAll(others, NAME);
    }

    @Override
    public byte[] getValue(BloomAccumulator acc) {
        if (!acc.hasShape()) {
            return null;
        }
        try {
            return FilterCodec.encode(acc.toFilter());
        } catch (Exception e) {
            throw new IllegalStateException(NAME + ": cannot read the filter's pages", e);
        }
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(
                        SqlArguments.strategy(
                                NAME,
                                3,
                                new Arg("value", Kind.VALUE),
                                new Arg("expected_items", Kind.EXPECTED_ITEMS),
                                new Arg("fpp", Kind.FPP)))
                .accumulatorTypeStrategy(TypeStrategies.explicit(BloomAccumulator.dataType()))
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.BYTES()))
                .build();
    }
}
