/**
 * bloomstream in Flink SQL and the Table API. The functions users register: {@code BLOOM_DEDUP}
 * ({@link io.bloomstream.table.DedupTableFunction}, a process table function), {@code BLOOM_SHARD}
 * ({@link io.bloomstream.table.ShardScalarFunction}), {@code BLOOM_COUNT_DISTINCT}, {@code
 * BLOOM_BUILD} and {@code BLOOM_UNION} (aggregate functions), {@code BLOOM_MIGHT_CONTAIN} and
 * {@code BLOOM_ESTIMATE} (scalar functions on filters as {@code BYTES} values). {@link
 * io.bloomstream.table.BloomFunctions} lists every function under its SQL name.
 *
 * <p>The classes named {@code Bloom*} here other than {@code BloomFunctions} and {@code
 * BloomAccumulator} are the deprecated names of 0.4, kept for one release. {@link
 * io.bloomstream.table.BloomAccumulator} keeps its name and package because both are written into
 * the state of every {@code BLOOM_COUNT_DISTINCT}, {@code BLOOM_BUILD} and {@code BLOOM_UNION}.
 */
package io.bloomstream.table;
