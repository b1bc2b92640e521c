/** The seeded generator of {@code testdata/} and of larger benchmark inputs. */
package io.bloomstream.jobs.testdata;
