package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_BUILD} had before 0.5, kept for one release so that {@code CREATE FUNCTION
 * BLOOM_BUILD AS 'io.bloomstream.table.BloomBuild'} keeps working.
 *
 * @deprecated use {@link BuildFilterAggFunction}; this class will be removed in the release after
 *     0.5
 */
@Deprecated
@PublicEvolving
public class BloomBuild extends BuildFilterAggFunction {

    private static final long serialVersionUID = 1L;
}
