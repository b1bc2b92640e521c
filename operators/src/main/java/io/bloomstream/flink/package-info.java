/**
 * Flink operators on Bloom filters kept in managed keyed state.
 *
 * <p>State layout: each key's filter is a small metadata value ({@link
 * io.bloomstream.flink.FilterMeta}) plus one {@code MapState} entry per non-empty page, so an event
 * reads one page per cascade stage and writes at most one. Both use the serializers of {@link
 * io.bloomstream.flink.typeutils}, never Kryo.
 */
package io.bloomstream.flink;
