/**
 * The {@code sql} command ({@link io.bloomstream.jobs.sql.SqlCommand}) and its machinery: cutting a
 * script into statements ({@link io.bloomstream.jobs.sql.SqlScript}) and running them one by one on
 * a table environment, printing each query's final result as tab-separated lines ({@link
 * io.bloomstream.jobs.sql.SqlRunner}).
 */
package io.bloomstream.jobs.sql;
