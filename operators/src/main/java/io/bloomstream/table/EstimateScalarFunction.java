package io.bloomstream.table;

import io.bloomstream.filter.Estimate;
import io.bloomstream.table.internal.FilterValues;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.table.internal.SqlArguments.Arg;
import io.bloomstream.table.internal.SqlArguments.Kind;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/**
 * {@code BLOOM_ESTIMATE(filter)} -> DOUBLE: the number of distinct items in a filter (BYTES in the
 * library's binary format), estimated from its bits ({@link Estimate}, within about three standard
 * errors of the truth); for a scalable filter the sum over its stages.
 *
 * <p>NULL for a NULL filter, and for a saturated filter (too few zero bits left to bound the
 * count), never a wrong number. Bytes that are not a valid filter fail the query with a message
 * naming the problem (truncated, checksum mismatch, unknown version or type, a field out of range).
 */
@PublicEvolving
public class EstimateScalarFunction extends ScalarFunction {

    private static final long serialVersionUID = 1L;

    /** The SQL name. */
    public static final String NAME = "BLOOM_ESTIMATE";

    private transient FilterValues filters;

    /** The estimate of {@code filter}'s distinct items. */
    public Double eval(byte[] filter) {
        if (filter == null) {
            return null;
        }
        if (filters == null) {
            filters = new FilterValues(NAME);
        }
        Estimate e = filters.get(filter).file().filter().estimate();
        return e.saturated() ? null : e.estimate();
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(SqlArguments.strategy(NAME, 1, new Arg("filter", Kind.FILTER)))
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.DOUBLE()))
                .build();
    }
}
