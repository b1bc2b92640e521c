package io.bloomstream.jobs.stream;

import org.apache.flink.streaming.api.datastream.DataStream;

/**
 * What a stream job's pipeline writes, for the caller's sinks: its records, and the rejected input
 * (one JSON object a line with the reason and the record).
 *
 * @param records the job's output lines
 * @param rejected the rejected lines, as JSON
 */
public record Outputs(DataStream<String> records, DataStream<String> rejected) {}
