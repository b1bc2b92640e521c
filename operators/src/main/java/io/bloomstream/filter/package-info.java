/**
 * The Bloom filter core: sizing, hashing, paged bit storage, plain, counting and scalable filters,
 * cardinality estimates and the versioned binary format.
 *
 * <p>This package is pure Java and must compile without Flink on the class path (a test keeps it
 * so); the Flink operators in {@code io.bloomstream.flink} build on it. Its only dependency is
 * hash4j, for XXH3-128 and XXH3-64.
 *
 * <p>None of the filters is thread-safe: a Flink operator instance uses its filters from one
 * thread. Share them across threads only behind external synchronization.
 */
package io.bloomstream.filter;
