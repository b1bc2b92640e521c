/**
 * Keyed and global dedup: {@link io.bloomstream.flink.dedup.BloomDedup} adds the operator, {@link
 * io.bloomstream.flink.dedup.DedupConfig} configures it, {@link
 * io.bloomstream.flink.dedup.DedupMetrics} names its metrics. The function ({@link
 * io.bloomstream.flink.dedup.DedupFunction}), its caching operator ({@link
 * io.bloomstream.flink.dedup.DedupOperator}) and the shape record checked on restore are internal.
 */
package io.bloomstream.flink.dedup;
