/** JMH benchmarks of the filter core; run by hand, see benchmarks/RESULTS.md. */
package io.bloomstream.benchmarks;
