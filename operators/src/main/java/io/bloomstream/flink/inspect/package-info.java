/**
 * What a savepoint or retained checkpoint holds of bloomstream's operators, read offline through
 * Flink's State Processor API ({@link io.bloomstream.flink.inspect.BloomInspect}): for dedup and
 * count, the keys, pages, fill, estimated distinct items, false-positive rate, cascade stages,
 * generations and exact entries; for a screen, the filter file in force and its live overlay.
 *
 * <p>The State Processor API ({@code org.apache.flink:flink-state-processor-api}) is not a
 * dependency of the library: a job that calls this package adds it.
 */
package io.bloomstream.flink.inspect;
