package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_UNION} had before 0.5, kept for one release so that {@code CREATE FUNCTION
 * BLOOM_UNION AS 'io.bloomstream.table.BloomUnion'} keeps working.
 *
 * @deprecated use {@link UnionAggFunction}; this class will be removed in the release after 0.5
 */
@Deprecated
@PublicEvolving
public class BloomUnion extends UnionAggFunction {

    private static final long serialVersionUID = 1L;
}
