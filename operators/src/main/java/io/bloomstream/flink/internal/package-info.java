/**
 * Internal helpers shared by the operators: uid rules, saturating time arithmetic, the shards of
 * global mode, the hash of an id as the filters take it, and rate-limited logging of rejected
 * events; the operator that runs a real operator inside a State Processor API bootstrap, and the
 * serializer of that API's records (the only classes here that need it).
 */
package io.bloomstream.flink.internal;
