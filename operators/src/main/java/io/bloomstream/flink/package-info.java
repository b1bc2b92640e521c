/**
 * Flink operators on Bloom filters: {@link io.bloomstream.flink.BloomDedup} (keyed and global
 * dedup), {@link io.bloomstream.flink.BloomScreen} (screening against a prebuilt filter file with
 * live updates), {@link io.bloomstream.flink.BloomCount} and {@link
 * io.bloomstream.flink.BloomOverlap} (distinct counts, union and intersection).
 *
 * <p>State layout of the keyed operators: each key's filter is a small metadata value ({@link
 * io.bloomstream.flink.FilterMeta}) plus one {@code MapState} entry per non-empty page, so an event
 * reads one page per cascade stage and writes at most one. Both use the serializers of {@link
 * io.bloomstream.flink.typeutils}, never Kryo. The screen keeps its filter out of state: only the
 * file's path and version and the live adds and removes are in broadcast state.
 */
package io.bloomstream.flink;
