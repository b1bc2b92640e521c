/**
 * The Flink side of bloomstream: the vocabulary shared by every operator ({@link
 * io.bloomstream.flink.IdSelector}), with one package per capability:
 *
 * <ul>
 *   <li>{@link io.bloomstream.flink.dedup}: keyed and global dedup ({@code BloomDedup});
 *   <li>{@link io.bloomstream.flink.screen}: screening against a prebuilt filter file with live
 *       updates ({@code BloomScreen});
 *   <li>{@link io.bloomstream.flink.count}: distinct counts, union and intersection ({@code
 *       BloomCount}, {@code BloomOverlap});
 *   <li>{@link io.bloomstream.flink.state} (internal): the judge and its stores, shared by the
 *       DataStream operators and the SQL functions: {@code FilterJudge} (probe and insert over a
 *       key's metadata and pages, generations, cascade growth) reads and writes only through a
 *       {@code FilterStore}, and {@code KeyedStateStore} is the DataStream one, the write-back
 *       cache over a small metadata value plus one {@code MapState} entry per non-empty page;
 *   <li>{@link io.bloomstream.flink.typeutils}: the serializers of that state, never Kryo (their
 *       snapshot class names are in every savepoint: they never move);
 *   <li>{@link io.bloomstream.flink.internal}: helpers shared by the operators.
 * </ul>
 *
 * <p>dedup, screen and count do not import each other (an ArchUnit test keeps it so). The judge and
 * the state backend meet at one narrow bloomstream interface ({@code FilterStore}), never at
 * Flink's {@code MapState} or {@code ValueState}: each API or backend gets a store of its own, and
 * the judging logic is written once above it. An adapter that makes one Flink API pretend to be
 * another is a sign that the seam sits in the wrong place. Each versioned artefact (metadata
 * format, dedup shape, page format, ...) has its own name and {@code VERSION_N} constants (the
 * table in docs/state.md). The layout and the house rules: CONTRIBUTING.md.
 */
package io.bloomstream.flink;
