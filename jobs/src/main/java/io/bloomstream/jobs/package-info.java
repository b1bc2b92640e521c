/**
 * Runnable jobs and command-line tools of bloomstream ({@link io.bloomstream.jobs.Main}): one class
 * per command, each building its pipeline from the library's operators, run on an embedded
 * mini-cluster with {@code java -jar bloomstream.jar} or on a cluster with {@code flink run}.
 */
package io.bloomstream.jobs;
