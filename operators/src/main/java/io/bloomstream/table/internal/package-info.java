/**
 * The plumbing of the SQL functions, not for users: argument checks ({@link
 * io.bloomstream.table.internal.SqlArguments}, {@link
 * io.bloomstream.table.internal.DedupArguments}), filters as {@code BYTES} values ({@link
 * io.bloomstream.table.internal.FilterValues}) and the state views of {@code BLOOM_DEDUP} ({@link
 * io.bloomstream.table.internal.DedupStateViews}). Everything here is {@code @Internal}.
 */
package io.bloomstream.table.internal;
