/**
 * Internal helpers shared by the operators: uid rules, saturating time arithmetic, the shards of
 * global mode, the hash of an id as the filters take it, and rate-limited logging of rejected
 * events.
 */
package io.bloomstream.flink.internal;
