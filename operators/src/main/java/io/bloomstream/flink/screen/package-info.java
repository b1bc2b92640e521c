/**
 * Screening a stream against a prebuilt filter file: {@link
 * io.bloomstream.flink.screen.BloomScreen} adds the operator, {@link
 * io.bloomstream.flink.screen.ScreenConfig} configures it, {@link
 * io.bloomstream.flink.screen.FilterUpdate} is a live update (add, remove, load a new file). The
 * filter itself is never in state: only the file's path, version and checksum and the live adds and
 * removes are in broadcast state.
 */
package io.bloomstream.flink.screen;
