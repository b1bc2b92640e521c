/**
 * The stream jobs of the command line: {@code dedup}, {@code frontier}, {@code screen} and {@code
 * count}. Each command parses its flags into the settings of its job and builds the job with a
 * public static {@code pipeline} method from input lines to its outputs; the command adds the
 * sources and sinks of its flags (files or Kafka, {@link io.bloomstream.jobs.io.IoOptions}), tests
 * their own. Also what the jobs share: the record format flags, event time, and the summary of a
 * finished run.
 */
package io.bloomstream.jobs.stream;
