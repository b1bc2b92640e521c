/**
 * Inputs and outputs of the jobs: files or Kafka topics (exactly once), line parsing, rejected
 * records as JSON, and end-of-job tallies.
 */
package io.bloomstream.jobs.io;
