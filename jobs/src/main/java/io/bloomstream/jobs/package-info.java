/**
 * Runnable jobs and command-line tools of bloomstream: {@link io.bloomstream.jobs.Main} dispatches
 * to one class per command, the offline tools in {@code tools}, the stream jobs in {@code stream}
 * and {@code sql}, run on an embedded mini-cluster with {@code java -jar bloomstream.jar} or on a
 * cluster with {@code flink run}. {@code io} holds their sources, sinks and parsing, {@code
 * console} what a local run prints, {@code testdata} the seeded generator of the test data.
 */
package io.bloomstream.jobs;
