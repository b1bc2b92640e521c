/**
 * The offline tools of the command line, which run no Flink job: {@code plan} (the sizing
 * calculator), {@code build-filter} (a list to a filter file), {@code inspect} (what a filter file
 * holds) and {@code query} (the lines of a file that might be in a filter).
 */
package io.bloomstream.jobs.tools;
