/**
 * TypeSerializers and their snapshots for filter state. Their binary layouts are versioned
 * contracts: savepoints written by one version restore in the next (a test restores a committed
 * savepoint).
 */
package io.bloomstream.flink.typeutils;
