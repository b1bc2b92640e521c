/**
 * Internal: a key's Bloom filter in managed keyed state, shared by dedup, count and the SQL
 * functions. Each key has a small metadata value ({@link io.bloomstream.flink.state.FilterMeta})
 * and one {@code MapState} entry per non-empty page, keyed by (generation slot, cascade stage, page
 * index) as {@link io.bloomstream.flink.state.StateLayout} lays them out, so an event reads one
 * page per stage and writes at most one. {@link io.bloomstream.flink.state.KeyCache} is the
 * write-back cache in front of that state. The layout is a contract: savepoints of every released
 * version restore (golden snapshots in the tests).
 */
package io.bloomstream.flink.state;
