package io.bloomstream.benchmarks;

import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.table.BloomDedupTables;
import io.bloomstream.table.ShardScalarFunction;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * The queries of {@link SqlBenchmark}, by name: their SQL ({@link #sql}), the views they read, and
 * what a query's name says of its input ({@value #UPDATING}, {@value #EVENT_TIME}, {@value
 * #MINI_BATCH}, {@code _ttl}, {@code _1p}). The one place that says what a user writes.
 */
final class SqlQueries {

    private SqlQueries() {}

    /** Groups of the count queries. */
    static final int GROUPS = 16;

    /**
     * The group of a row: x mod {@link #GROUPS} in [0, GROUPS). The ids are negative as often as
     * not, and SQL's {@code MOD(x, 16)} of a negative x is negative: before issue 33 the {@code g}
     * column had 31 values, so each filter (sized for ids / GROUPS) held half its expected items
     * and the Bloom aggregates' state was about twice what 16 groups need.
     */
    static final String GROUP_OF_X = "MOD(MOD(x, " + GROUPS + ") + " + GROUPS + ", " + GROUPS + ")";

    /** The part of a query's name that makes it read the updating input ({@link UpdatingInput}). */
    static final String UPDATING = "_updating";

    /**
     * The system property that sets the fpp of {@code bloom_count_distinct_updating} (default 0.01,
     * the other queries' fpp).
     */
    static final String UPDATING_FPP_PROPERTY = "bench.updatingFpp";

    /** The part of a query's name that makes it read the event-time input (issue 40). */
    static final String EVENT_TIME = "_et";

    /**
     * The part of an event-time query's name that keeps mini-batch on ({@code row_number_mb_et}):
     * the other {@code *_et} queries run without it, for with it Flink plans {@code ROW_NUMBER}
     * keep-first by a rowtime as an updating rank (changelog I, UA, D), not the insert-only
     * deduplication emitted at the watermark that {@code BLOOM_DEDUP} with {@code on_time} matches.
     */
    static final String MINI_BATCH = "_mb";

    /**
     * The state TTL of the {@code row_number_ttl} query, and the {@code state_ttl} of {@code
     * bloom_dedup_ttl} (a processing-time retention: the documented query with {@code state_ttl =>
     * INTERVAL '1' HOUR}).
     */
    static final String TTL = "1 h";

    /**
     * Whether {@code query} reads the updating input ({@link UpdatingInput}): its name has {@value
     * #UPDATING}.
     */
    static boolean isUpdating(String query) {
        return query.contains(UPDATING);
    }

    /**
     * Whether {@code query} reads the event-time input: its name ends with {@value #EVENT_TIME}.
     */
    static boolean isEventTime(String query) {
        return query.endsWith(EVENT_TIME);
    }

    /**
     * The view {@code BLOOM_DEDUP} reads: the rows with their shard, as docs/sql-dedup.md writes
     * the dedup of a whole table ({@code BLOOM_SHARD(id)}, its default shard count). With {@link
     * #bloomDedup} the one place that says what a user writes.
     */
    static final String SHARDED_VIEW =
            "CREATE TEMPORARY VIEW sharded AS SELECT id, x, BLOOM_SHARD(id) AS shard FROM events";

    /** {@link #SHARDED_VIEW} of the event-time input: with its rowtime {@code ts}. */
    static final String SHARDED_VIEW_EVENT_TIME =
            "CREATE TEMPORARY VIEW sharded AS SELECT id, x, ts, BLOOM_SHARD(id) AS shard"
                    + " FROM events";

    /**
     * The {@code BLOOM_DEDUP} query as docs/sql-dedup.md writes it for {@code ids} distinct ids in
     * all, over {@link #SHARDED_VIEW}: {@code expected_items} the total, {@code shards} the shard
     * count of {@code BLOOM_SHARD} (each shard's filter is sized for its share), fpp 1%, a {@code
     * uid}; it selects the columns the {@code ROW_NUMBER} query returns.
     */
    static String bloomDedup(long ids) {
        return bloomDedup(ids, false);
    }

    /**
     * {@link #bloomDedup(long)}, with {@code exact => TRUE} when {@code exact} (docs/sql-dedup.md,
     * "Exact mode"), under a uid of its own.
     */
    static String bloomDedup(long ids, boolean exact) {
        return "SELECT id, x FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard,"
                + " id_column => 'id', expected_items => "
                + ids
                + ", fpp => 0.01, shards => "
                + ShardScalarFunction.DEFAULT_SHARDS
                + (exact
                        ? ", exact => TRUE, uid => 'bench-dedup-exact')"
                        : ", uid => 'bench-dedup')");
    }

    /**
     * The documented sharded {@code BLOOM_DEDUP} query (or without {@code PARTITION BY} when {@code
     * whole}) by event time, over {@link #SHARDED_VIEW_EVENT_TIME}: {@code on_time =>
     * DESCRIPTOR(ts)}, and {@code first_by => 'ARRIVAL'} when {@code arrival}.
     */
    static String bloomDedupEventTime(long ids, boolean whole, boolean arrival) {
        return "SELECT id, x FROM BLOOM_DEDUP(input => "
                + (whole ? "TABLE events" : "TABLE sharded PARTITION BY shard")
                + ", id_column => 'id', expected_items => "
                + ids
                + ", fpp => 0.01"
                + (whole ? "" : ", shards => " + ShardScalarFunction.DEFAULT_SHARDS)
                + ", on_time => DESCRIPTOR(ts)"
                + (arrival ? ", first_by => 'ARRIVAL'" : "")
                + ", uid => 'bench-dedup"
                + (whole ? "-whole" : "")
                + (arrival ? "-arrival" : "")
                + "-et')";
    }

    /**
     * The contender that is a Java Table pipeline, not a query (issue 41): {@link
     * BloomDedupTables#dedup} of {@code SELECT id, x FROM events} by {@code id}, sized and sharded
     * as {@link #bloomDedup}, fpp 1%.
     */
    static final String TABLE_API_DEDUP = "bloom_dedup_table";

    /** The result of {@value #TABLE_API_DEDUP}: the documented Java call. */
    static Table tableApiDedup(StreamTableEnvironment tEnv, long ids) {
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(ids)
                        .fpp(0.01)
                        .shards(ShardScalarFunction.DEFAULT_SHARDS)
                        .build();
        return BloomDedupTables.withUidPrefix("bench-dedup-table")
                .dedup(tEnv, tEnv.sqlQuery(sql(TABLE_API_DEDUP, ids)), "id", config);
    }

    /** The SQL of {@code query}. */
    static String sql(String query, long ids) {
        long perGroup = (ids + GROUPS - 1) / GROUPS;
        switch (query) {
            case "row_number" + EVENT_TIME:
            case "row_number" + MINI_BATCH + EVENT_TIME:
                return "SELECT id, x FROM (SELECT id, x, ROW_NUMBER() OVER (PARTITION BY id"
                        + " ORDER BY ts) AS rn FROM events) WHERE rn = 1";
            case "bloom_dedup" + EVENT_TIME:
                return bloomDedupEventTime(ids, false, false);
            case "bloom_dedup_whole" + EVENT_TIME:
                return bloomDedupEventTime(ids, true, false);
            case "bloom_dedup_arrival" + EVENT_TIME:
                return bloomDedupEventTime(ids, false, true);
            case "row_number":
            case "row_number_ttl":
                return "SELECT id, x FROM (SELECT id, x, ROW_NUMBER() OVER (PARTITION BY id"
                        + " ORDER BY pt) AS rn FROM events) WHERE rn = 1";
            case "bloom_dedup":
                return bloomDedup(ids);
            case "bloom_dedup_exact":
                return bloomDedup(ids, true);
            case "bloom_dedup_ttl":
                // the retention of row_number_ttl, as BLOOM_DEDUP takes it (it ignores the option)
                return bloomDedup(ids)
                        .replace(
                                ", uid => 'bench-dedup')",
                                ", state_ttl => INTERVAL '1' HOUR, uid => 'bench-dedup-ttl')");
            case TABLE_API_DEDUP:
                // the Table that BloomDedupTables.dedup takes ({@link #tableApiDedup})
                return "SELECT id, x FROM events";
            case "bloom_dedup_whole":
                // the shortest rewrite: no PARTITION BY, the whole input on one task
                return "SELECT id, x FROM BLOOM_DEDUP(input => TABLE events, id_column => 'id',"
                        + " expected_items => "
                        + ids
                        + ", fpp => 0.01, uid => 'bench-dedup-whole')";
            case "count_distinct":
            case "count_distinct_1p":
            case "count_distinct_updating":
            case "count_distinct_updating_1p":
                return "SELECT g, COUNT(DISTINCT id) FROM events GROUP BY g";
            case "bloom_count_distinct":
            case "bloom_count_distinct_1p":
                return "SELECT g, BLOOM_COUNT_DISTINCT(id, "
                        + perGroup
                        + ", 0.01) FROM events GROUP BY g";
            case "bloom_count_distinct_updating":
            case "bloom_count_distinct_updating_1p":
                // the counting form: the plain one is refused at planning on updating input
                return "SELECT g, BLOOM_COUNT_DISTINCT(id, "
                        + perGroup
                        + ", "
                        + System.getProperty(UPDATING_FPP_PROPERTY, "0.01")
                        + ", 'retract') FROM events GROUP BY g";
            default:
                throw new IllegalArgumentException("query: unknown " + query);
        }
    }
}
