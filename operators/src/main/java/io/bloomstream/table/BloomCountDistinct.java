package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_COUNT_DISTINCT} had before 0.5, kept for one release so that {@code CREATE
 * FUNCTION BLOOM_COUNT_DISTINCT AS 'io.bloomstream.table.BloomCountDistinct'} keeps working.
 *
 * @deprecated use {@link CountDistinctAggFunction}; this class will be removed in the release after
 *     0.5
 */
@Deprecated
@PublicEvolving
public class BloomCountDistinct extends CountDistinctAggFunction {

    private static final long serialVersionUID = 1L;
}
