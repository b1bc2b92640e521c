package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_SHARD} had before 0.5, kept for one release so that {@code CREATE FUNCTION
 * BLOOM_SHARD AS 'io.bloomstream.table.BloomShard'} keeps working.
 *
 * @deprecated use {@link ShardScalarFunction}; this class will be removed in the release after 0.5
 */
@Deprecated
@PublicEvolving
public class BloomShard extends ShardScalarFunction {

    private static final long serialVersionUID = 1L;
}
