/**
 * Distinct counts per key ({@link io.bloomstream.flink.count.BloomCount}) and union and
 * intersection estimates between two streams ({@link io.bloomstream.flink.count.BloomOverlap}),
 * configured by {@link io.bloomstream.flink.count.CountConfig} and emitted as {@link
 * io.bloomstream.flink.count.CountEstimate} and {@link io.bloomstream.flink.count.OverlapEstimate}.
 */
package io.bloomstream.flink.count;
