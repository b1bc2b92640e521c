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
 *   <li>{@link io.bloomstream.flink.state} (internal): each key's filter in managed keyed state, a
 *       small metadata value plus one {@code MapState} entry per non-empty page, and the write-back
 *       cache;
 *   <li>{@link io.bloomstream.flink.typeutils}: the serializers of that state, never Kryo (their
 *       snapshot class names are in every savepoint: they never move);
 *   <li>{@link io.bloomstream.flink.internal}: helpers shared by the operators.
 * </ul>
 *
 * <p>dedup, screen and count do not import each other (an ArchUnit test keeps it so).
 */
package io.bloomstream.flink;
