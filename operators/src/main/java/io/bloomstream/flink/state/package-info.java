/**
 * Internal: the judge of a key's Bloom filter and the stores it reads and writes, shared by dedup,
 * count and the SQL functions. {@link io.bloomstream.flink.state.FilterJudge} probes and inserts
 * over a key's metadata ({@link io.bloomstream.flink.state.FilterMeta}) and pages, keyed by
 * (generation slot, cascade stage, page index) as {@link io.bloomstream.flink.state.StateLayout}
 * lays them out, so an event reads one page per stage and writes at most one. It reaches state only
 * through a {@link io.bloomstream.flink.state.FilterStore}, the one narrow seam between the judging
 * logic and each place the state lives: {@link io.bloomstream.flink.state.KeyedStateStore} for the
 * DataStream operator (its write-back {@link io.bloomstream.flink.state.KeyCache} over a {@code
 * ValueState} and a {@code MapState}), the SQL function's over its {@code MapView}s. The layout is
 * a contract: savepoints of every released version restore (golden snapshots in the tests; the
 * versioned artefacts in docs/state.md).
 */
package io.bloomstream.flink.state;
