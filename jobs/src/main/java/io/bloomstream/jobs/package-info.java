/** Runnable jobs and command-line tools of bloomstream, packaged as one jar. */
package io.bloomstream.jobs;
