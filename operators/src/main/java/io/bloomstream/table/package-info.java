/**
 * bloomstream in Flink SQL and the Table API: {@code BLOOM_DEDUP} (a process table function),
 * {@code BLOOM_SHARD}, {@code BLOOM_COUNT_DISTINCT} and filters as {@code BYTES} values. {@link
 * io.bloomstream.table.BloomFunctions} lists every function under its SQL name.
 */
package io.bloomstream.table;
