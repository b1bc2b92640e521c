package io.bloomstream.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The name {@code BLOOM_DEDUP} had before 0.5, kept for one release so that {@code CREATE FUNCTION
 * BLOOM_DEDUP AS 'io.bloomstream.table.BloomDedup'} keeps working.
 *
 * @deprecated use {@link DedupTableFunction}; this class will be removed in the release after 0.5
 */
@Deprecated
@PublicEvolving
public class BloomDedup extends DedupTableFunction {

    private static final long serialVersionUID = 1L;
}
