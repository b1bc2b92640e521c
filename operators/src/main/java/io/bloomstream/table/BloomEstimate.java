package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_ESTIMATE} had before 0.5, kept for one release so that {@code CREATE
 * FUNCTION BLOOM_ESTIMATE AS 'io.bloomstream.table.BloomEstimate'} keeps working.
 *
 * @deprecated use {@link EstimateScalarFunction}; this class will be removed in the release after
 *     0.5
 */
@Deprecated
@PublicEvolving
public class BloomEstimate extends EstimateScalarFunction {

    private static final long serialVersionUID = 1L;
}
