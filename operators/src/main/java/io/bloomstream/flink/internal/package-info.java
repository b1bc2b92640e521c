/**
 * Internal helpers shared by the operators: uid rules, saturating time arithmetic, the shards of
 * global mode and rate-limited logging of rejected events.
 */
package io.bloomstream.flink.internal;
