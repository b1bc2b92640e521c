package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_MIGHT_CONTAIN} had before 0.5, kept for one release so that {@code CREATE
 * FUNCTION BLOOM_MIGHT_CONTAIN AS 'io.bloomstream.table.BloomMightContain'} keeps working.
 *
 * @deprecated use {@link MightContainScalarFunction}; this class will be removed in the release
 *     after 0.5
 */
@Deprecated
@PublicEvolving
public class BloomMightContain extends MightContainScalarFunction {

    private static final long serialVersionUID = 1L;
}
