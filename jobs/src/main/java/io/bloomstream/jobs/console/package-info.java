/**
 * What a local run shows on the console: quiet logging (Flink's own log to a file), a progress line
 * fed by the running job, the filter health of the summary, and failures in one line.
 */
package io.bloomstream.jobs.console;
