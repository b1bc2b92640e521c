/**
 * The plumbing of the SQL functions, not for users: argument checks ({@link
 * io.bloomstream.table.internal.SqlArguments}, {@link
 * io.bloomstream.table.internal.DedupArguments}), filters as {@code BYTES} values ({@link
 * io.bloomstream.table.internal.FilterValues}) and the state of {@code BLOOM_DEDUP}: its layout
 * ({@link io.bloomstream.table.internal.SqlDedupLayout}) and its {@code FilterStore} ({@link
 * io.bloomstream.table.internal.SqlDedupStore}). Everything here is {@code @Internal}.
 */
package io.bloomstream.table.internal;
