/**
 * The stream jobs of the command line: {@code dedup}, {@code frontier}, {@code screen} and {@code
 * count}, with what they share: the record format flags, event time, and the summary of a finished
 * run.
 */
package io.bloomstream.jobs.stream;
