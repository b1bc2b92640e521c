/**
 * The offline tools of the command line: {@code plan} (the sizing calculator), {@code build-filter}
 * (a list to a filter file), {@code inspect} (what a filter file holds, or what bloomstream's
 * operators hold in a savepoint: {@link io.bloomstream.jobs.tools.SavepointInspection}), {@code
 * query} (the lines of a file that might be in a filter), and the readers of a Flink SQL dedup's
 * savepoint that {@code bootstrap --from-savepoint} uses ({@link
 * io.bloomstream.jobs.tools.RowNumberSavepoint}). The savepoint readers run small local Flink jobs
 * (the State Processor API); the others run none.
 */
package io.bloomstream.jobs.tools;
