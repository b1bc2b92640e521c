package io.bloomstream.table;

import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.table.internal.DedupArgumentChecks;
import io.bloomstream.table.internal.DedupArguments;
import io.bloomstream.table.internal.DedupCall;
import io.bloomstream.table.internal.DedupStateCache;
import io.bloomstream.table.internal.PendingRows;
import io.bloomstream.table.internal.SqlDedupLayout;
import io.bloomstream.table.internal.SqlDedupRun;
import io.bloomstream.table.internal.SqlDedupStore;
import io.bloomstream.table.internal.SqlDedupViews;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.annotation.ArgumentHint;
import org.apache.flink.table.annotation.ArgumentTrait;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.StateHint;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.ProcessTableFunction;
import org.apache.flink.table.types.inference.StaticArgument;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.types.Row;

/**
 * {@code BLOOM_DEDUP}, a process table function: the first occurrence of each id per partition,
 * with all its columns, remembered by Bloom filters in Flink managed state.
 *
 * <pre>{@code
 * SELECT * FROM BLOOM_DEDUP(
 *     input => TABLE events PARTITION BY user_id,
 *     id_column => 'event_id',          -- or several: 'region, user_name'
 *     expected_items => 100000,         -- distinct ids per partition key (per retention period)
 *     fpp => 0.01,
 *     state_ttl => INTERVAL '1' DAY,    -- optional (or retention =>); zero: none
 *     reset_ttl_on_duplicate => TRUE,   -- optional; the default under state_ttl
 *     on_time => DESCRIPTOR(ts),        -- the event-time column (with a watermark)
 *     first_by => 'EVENT_TIME',         -- optional: the default with on_time, or 'ARRIVAL'
 *     generations => 2,                 -- optional, 2 to 46; needs retention
 *     exact => FALSE,                   -- optional: TRUE, exact mode (below)
 *     uid => 'dedup-events')            -- optional: names the state for savepoints
 * }</pre>
 *
 * <p><b>Output.</b> The PARTITION BY columns first, then every other column of the input in its
 * order (time attributes become plain timestamps), then, with {@code on_time}, the {@code rowtime}
 * column (the row's event time, a time attribute for later windows). The output is insert-only.
 *
 * <p><b>Partitions.</b> Without {@code PARTITION BY} the whole input is one partition: Flink runs
 * the function on one task (parallelism 1, a singleton exchange), every row's id is judged against
 * one filter, and the output is the input's own columns in their order, so {@code INSERT INTO sink
 * SELECT * FROM BLOOM_DEDUP(input => TABLE t, id_column => 'id', ...)} replaces a keep-first query
 * as it is. For a dedup over the whole table in parallel, partition by a shard of the id, {@link
 * ShardScalarFunction BLOOM_SHARD(id)} computed in a view (Flink gives a process table function
 * state per partition key, so the parallel form needs a partition column). Partitioning by the id
 * columns themselves (alone or with others) is refused at planning time, naming both rewrites: it
 * would keep a filter per id, more state than the exact dedup.
 *
 * <p><b>Which row is an id's first</b> ({@code first_by}), as Flink's keep-first deduplication
 * decides it:
 *
 * <ul>
 *   <li>{@code 'EVENT_TIME'}, the default with {@code on_time}: Flink's {@code ROW_NUMBER() OVER
 *       (PARTITION BY id ORDER BY rowtime) = 1} and {@code DEDUPLICATE_KEEP_FIRST} with {@code
 *       on_time}. The row with the <b>earliest event time</b> of its id is its first, the first to
 *       arrive among rows of equal time; it is returned when the watermark reaches its time. A row
 *       waits in state ({@value #PENDING_STATE}) only until then: on the timer of its time, the
 *       rows of that time are judged in their order of arrival, and only then is an id remembered.
 *       Without retention, a row whose id is already remembered when it arrives is dropped as a
 *       duplicate at once, without waiting: the filter only grows, so its verdict at the timer
 *       could not differ.
 *   <li>{@code 'ARRIVAL'}, and the only choice without {@code on_time} (Flink's keep-first by a
 *       processing-time attribute): the first row to arrive is the first, returned at once, with no
 *       latency; an earlier event time arriving later is a duplicate.
 * </ul>
 *
 * <p><b>Late rows</b> (with {@code on_time}, both choices): a row whose event time is below the
 * current watermark is late: dropped, counted in {@code bloomLate}, and it marks nothing, so a late
 * first row of an id leaves the id unseen (Flink's rule). Flink 2.2 itself drops a row at or before
 * the watermark before the function sees it, silently (not counted); Flink 2.3 passes them to the
 * function (FLINK-39436), which judges a row at the watermark as Flink's own keep-first does.
 *
 * <p><b>Guarantee</b>, per partition key and id, of the rows judged (those not late) in the order
 * of {@code first_by}. Without retention, a row is returned only if no earlier row with its id was
 * returned: a duplicate is never returned; a first occurrence is dropped only as a false positive,
 * at a rate of at most {@code fpp} (the scalable growth keeps that rate past {@code
 * expected_items}). With {@code retention} R (G generations of length L = R / (G - 1)) on the event
 * time of {@code on_time}, or on processing time without it (the time a row is judged): two
 * occurrences of an id less than R apart are never both returned, in any order of arrival; an
 * occurrence at least R + L away from every returned one is returned unless it is a false positive
 * (rate at most fpp (2G - 1) / G for out-of-order rows). With {@code reset_ttl_on_duplicate} a
 * duplicate refreshes its id, so an id that recurs at gaps shorter than R is never returned again.
 * On event time a key's state is freed by event-time timers once the watermark has passed its
 * generations' end + R. On processing time, Flink 2.2 and 2.3 give a process table function no
 * timers: a key's expired generations are freed when the key is next seen (in the sharded form
 * every shard is seen all the time); the state of a key never seen again stays.
 *
 * <p><b>Ids.</b> {@code id_column} names one column, or several separated by commas. NULL is an id
 * like any other, one group as in Flink: its first row is returned. With several columns, the tuple
 * of values is the id: a NULL in one column is a value of its own, and tuples are encoded so that
 * two never meet (no separator to collide; {@code RowIds}).
 *
 * <p><b>Exact mode</b> ({@code exact => TRUE}): the same guarantee without false positives, as
 * {@link DedupConfig.Builder#exact}: each id added to a generation's filter is also kept, itself
 * ({@code ExactKeys}), in {@value #EXACT_STATE}; a filter's "maybe" reads it, and only an id found
 * there is a duplicate, so a first occurrence is always returned. State then grows with the
 * distinct ids (per retention). Switching it on at a restore leaves the ids added before without
 * exact entries (their next occurrence is returned once more); switching it off leaves the entries
 * until their generation expires.
 *
 * <p><b>Bad rows.</b> A row whose one id column holds an empty string or empty bytes is dropped and
 * counted in the metric {@code bloomRejected} (and logged: the first ten, then every 10,000th), as
 * the DataStream operator sends it to its rejected side output (Flink would keep it as a key; here
 * the empty id is NULL's place in the filter and in exact mode); so is, with {@code on_time}, a row
 * without an event time. Every row that reaches the function is counted in exactly one of {@code
 * bloomPassed}, {@code bloomDuplicates}, {@code bloomLate} and {@code bloomRejected} (see {@link
 * io.bloomstream.flink.dedup.DedupMetrics}).
 *
 * <p><b>Arguments</b>, checked at planning time (a {@code ValidationException} naming the argument
 * and its value). A name the function does not know, or one given twice, fails naming it and the
 * known ones: Calcite drops an unknown name before the function sees the call, so the check reads
 * the call as written ({@code FlinkCallContexts#argumentNames}). The arguments: {@code id_column} a
 * literal naming STRING, BYTES or integer columns of the input (one, or several separated by
 * commas); {@code expected_items} a positive INT literal; {@code fpp} a DECIMAL literal in (0, 1);
 * {@code retention} a positive day-time INTERVAL literal, on event time with {@code on_time} and on
 * processing time without; {@code state_ttl} the same retention under the name Flink's {@code
 * DEDUPLICATE_KEEP_FIRST} gives it (not both; zero: no retention, as in Flink); {@code first_by}
 * 'EVENT_TIME' (only with {@code on_time}) or 'ARRIVAL', in any case; {@code
 * reset_ttl_on_duplicate} a BOOLEAN literal, only with {@code state_ttl} (zero: no effect, as in
 * Flink) or a retention: a duplicate within the retention refreshes its id, which is then
 * remembered R after its last occurrence, not its first (TRUE by default under {@code state_ttl},
 * as in Flink; FALSE under {@code retention}, bloomstream 0.5's behaviour); {@code generations} an
 * INT literal from 2 to 46, only with a retention; {@code shards} a positive INT literal, only with
 * PARTITION BY: the shard count of the {@code BLOOM_SHARD(id, shards)} partition column, which
 * makes {@code expected_items} count the whole input's ids, each shard's filter sized for its share
 * ({@code Shards.itemsPerShard}: the mean plus four standard deviations); without it {@code
 * expected_items} counts one partition key's ids (without PARTITION BY, the whole input's); {@code
 * exact} a BOOLEAN literal (default FALSE). Flink 2.2 passes scalar arguments to the function
 * without casting them, so the literal types are strict (write {@code 0.01}, not {@code 1e-2}); a
 * literal of another type, or a misspelt or missing {@code input}, fails with Calcite's message
 * ({@code DedupCallHints} names the argument); the others are optional, so a missing one is named.
 *
 * <p><b>State</b> is the DataStream operator's paged layout, per key, in version 6 of the SQL dedup
 * layout ({@link SqlDedupLayout}, where every version and its migration are described): a {@code
 * MapView} {@value #PAGES_V6_STATE} of pages (page key = generation slot, cascade stage and page
 * index, as {@code StateLayout.pageKey}; value the page's 64-bit words as little-endian BYTES) and
 * a {@code MapView} {@value #META_V6_STATE} holding the key's metadata (hash, generations, stages)
 * as BYTES in the versioned format of {@code FilterMetaSerializer} and, under a retention, the
 * retention and generations it was written with (a timer that fires after a restore, before any row
 * reached the task, frees state under those), and in exact mode the {@code MapView} {@value
 * #EXACT_V6_STATE} of exact entries (one per id and generation slot, never cached, written
 * through). The function declares no row state (Flink reads a declared row on every call), and its
 * entries are declared without Flink's state TTL ({@link #NO_TTL}): no TTL wrapper serializes or
 * checks a value; {@code retention} frees state, and Flink's {@code table.exec.state.ttl} does not
 * apply. A row reads the metadata and its pages from a per-task read cache ({@link
 * DedupStateCache}, bounded by {@link DedupConfig#DEFAULT_CACHE_BYTES}) and writes every change
 * through to state in the same call ({@link SqlDedupStore}), except, without retention, a change of
 * an item count alone: the metadata is then written every few such changes (1/64 of the stage's
 * capacity, at most 64) and a read from state counts the changes it may lack as items, so a
 * checkpoint at any time holds everything, or more items than there are, which only makes a stage
 * fill early. State of layouts 2 to 5 (bloomstream 0.5 snapshots, in {@value #META_V2_STATE},
 * {@value #PAGES_V2_STATE} and {@value #EXACT_STATE}, declared with their TTL of never, {@link
 * #STATE_TTL}, so that they restore) is moved to layout 6 when its key is first read (by a row or a
 * timer); a key of layout 4 is one of layout 5 without exact entries. Ids of a key new to the state
 * are hashed with XXH3-64 (one 64-bit hash per row, computed without allocating); a key whose state
 * records XXH3-128 (written by bloomstream 0.4, or by 0.5 snapshots before XXH3-64) keeps hashing
 * with it, so every key's state restores as written. It is keyed by the partition key, so it
 * rescales with Flink's key groups. A restore from a savepoint keeps the state when the query keeps
 * its {@code uid}; it may change {@code expected_items}, {@code fpp}, {@code retention} and {@code
 * generations} (existing stages keep their shape; a new retention applies from the restore on), but
 * turning retention on or off fails naming the field when a key is first read. State of layout 1
 * (bloomstream 0.4, the metadata in a row) is read only by the deprecated {@link
 * LegacyDedupTableFunction} (docs/upgrading.md). Under {@code first_by => 'EVENT_TIME'} the rows
 * waiting for the watermark are in {@value #PENDING_STATE} ({@link PendingRows}: per event time,
 * the rows in their order of arrival, each value with its own format byte and the call's arguments,
 * so that a timer that fires after a restore before any row judges under them), declared without
 * Flink TTL ({@link #NO_TTL}): its entries exist only between a row's arrival and the watermark
 * passing it, so the state is bounded by the rows in flight plus the filter. A restore that changes
 * the input's columns while rows wait is refused when their timer fires, naming both row types.
 * Switching {@code first_by} at a restore keeps the filter state (the same layout); rows still
 * waiting are judged when their timer fires.
 */
@PublicEvolving
@DataTypeHint("ROW<>")
public class DedupTableFunction extends ProcessTableFunction<Row> {

    private static final long serialVersionUID = 1L;

    /** Name of the per-key metadata entry of layouts 2 to 5 (part of the savepoint contract). */
    public static final String META_V2_STATE = SqlDedupLayout.META_V2_STATE;

    /** Name of the per-key pages entry of layouts 2 to 5 (part of the savepoint contract). */
    public static final String PAGES_V2_STATE = SqlDedupLayout.PAGES_V2_STATE;

    /**
     * Name of the per-key exact entries of exact mode, layout 5 (part of the savepoint contract).
     */
    public static final String EXACT_STATE = SqlDedupLayout.EXACT_STATE;

    /** Name of the per-key metadata entry of layout 6 (part of the savepoint contract). */
    public static final String META_V6_STATE = SqlDedupLayout.META_V6_STATE;

    /** Name of the per-key pages entry of layout 6 (part of the savepoint contract). */
    public static final String PAGES_V6_STATE = SqlDedupLayout.PAGES_V6_STATE;

    /** Name of the per-key exact entries of layout 6 (part of the savepoint contract). */
    public static final String EXACT_V6_STATE = SqlDedupLayout.EXACT_V6_STATE;

    /**
     * The Flink state TTL of the entries of layouts 1 to 5: never (Long.MAX_VALUE ms). Flink 2.2
     * and 2.3 give a PTF's state without a hint and without {@code table.exec.state.ttl} this same
     * TTL (StreamExecProcessTableFunction#deriveStateTimeToLive), so savepoints of layouts 1 and 2
     * were written with its serializers, and the entries keep it to restore.
     */
    public static final String STATE_TTL = "9223372036854775807 ms";

    /**
     * Name of the per-key rows waiting for the watermark under {@code first_by => 'EVENT_TIME'}
     * (part of the savepoint contract; see {@link PendingRows}).
     */
    public static final String PENDING_STATE = SqlDedupLayout.PENDING_STATE;

    /**
     * The Flink state TTL of the entries of layout 6 and of {@value #PENDING_STATE}: none, and no
     * TTL wrapper. A hint overrides {@code table.exec.state.ttl}, which would otherwise expire the
     * metadata and the pages of a key independently of each other (a partial filter forgets ids, or
     * misreads pages); the function frees state by its own {@code retention}, and a row waits only
     * until the watermark passes it.
     */
    public static final String NO_TTL = "0 ms";

    /**
     * The processing-time clock of a retention without {@code on_time}: the wall clock. A test
     * seam: tests of this package set it (and set it back) to run a retention without waiting.
     */
    @org.apache.flink.annotation.VisibleForTesting
    static volatile java.util.function.LongSupplier clock = System::currentTimeMillis;

    private transient SqlDedupRun run;
    private transient SqlDedupViews views;

    @Override
    public void open(FunctionContext context) throws Exception {
        run = new SqlDedupRun(context.getMetricGroup(), clock, this::collect);
        views = new SqlDedupViews();
    }

    /** Judges one row; see the class comment. */
    public void eval(
            Context ctx,
            @StateHint(name = META_V2_STATE, ttl = STATE_TTL) MapView<Integer, byte[]> oldMeta,
            @StateHint(name = PAGES_V2_STATE, ttl = STATE_TTL) MapView<Long, byte[]> oldPages,
            @StateHint(name = EXACT_STATE, ttl = STATE_TTL) MapView<String, Boolean> oldExact,
            @StateHint(name = META_V6_STATE, ttl = NO_TTL) MapView<Integer, byte[]> metaView,
            @StateHint(name = PAGES_V6_STATE, ttl = NO_TTL) MapView<Long, byte[]> pagesView,
            @StateHint(name = EXACT_V6_STATE, ttl = NO_TTL) MapView<String, Boolean> exactView,
            @StateHint(name = PENDING_STATE, ttl = NO_TTL) MapView<Long, byte[]> pendingView,
            @ArgumentHint(
                            name = DedupArguments.INPUT,
                            value = {
                                ArgumentTrait.SET_SEMANTIC_TABLE,
                                ArgumentTrait.OPTIONAL_PARTITION_BY
                            })
                    Row input,
            @ArgumentHint(name = DedupArguments.ID_COLUMN, isOptional = true) String idColumn,
            @ArgumentHint(name = DedupArguments.EXPECTED_ITEMS, isOptional = true)
                    Integer expectedItems,
            @ArgumentHint(
                            name = DedupArguments.FPP,
                            isOptional = true,
                            type = @DataTypeHint("DECIMAL(38, 18)"))
                    BigDecimal fpp,
            @ArgumentHint(
                            name = DedupArguments.RETENTION,
                            isOptional = true,
                            type = @DataTypeHint(DedupArguments.INTERVAL_TYPE))
                    Duration retention,
            @ArgumentHint(name = DedupArguments.GENERATIONS, isOptional = true) Integer generations,
            @ArgumentHint(name = DedupArguments.SHARDS, isOptional = true) Integer shards,
            @ArgumentHint(
                            name = DedupArguments.STATE_TTL,
                            isOptional = true,
                            type = @DataTypeHint(DedupArguments.INTERVAL_TYPE))
                    Duration stateTtl,
            @ArgumentHint(name = DedupArguments.RESET_TTL_ON_DUPLICATE, isOptional = true)
                    Boolean resetTtlOnDuplicate,
            @ArgumentHint(name = DedupArguments.EXACT, isOptional = true) Boolean exact,
            @ArgumentHint(name = DedupArguments.FIRST_BY, isOptional = true) String firstByArg)
            throws Exception {
        if (!run.configuredByRow()) {
            run.configureByRow(
                    ctx.tableSemanticsFor(DedupArguments.INPUT),
                    new DedupCall(
                            idColumn,
                            expectedItems,
                            shards,
                            fpp,
                            retention,
                            stateTtl,
                            resetTtlOnDuplicate,
                            generations,
                            exact,
                            firstByArg));
        }
        run.eval(
                ctx,
                views.bind(
                        oldMeta, oldPages, oldExact, metaView, pagesView, exactView, pendingView),
                input);
    }

    /**
     * Judges the rows that wait for this time ({@code first_by => 'EVENT_TIME'}), in their order of
     * arrival, then frees the current key's expired generations (event-time retention only).
     */
    public void onTimer(
            OnTimerContext ctx,
            MapView<Integer, byte[]> oldMeta,
            MapView<Long, byte[]> oldPages,
            MapView<String, Boolean> oldExact,
            MapView<Integer, byte[]> metaView,
            MapView<Long, byte[]> pagesView,
            MapView<String, Boolean> exactView,
            MapView<Long, byte[]> pendingView)
            throws Exception {
        run.onTimer(
                ctx,
                views.bind(
                        oldMeta, oldPages, oldExact, metaView, pagesView, exactView, pendingView));
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return typeInference(super.getTypeInference(typeFactory));
    }

    /** The type inference of the function, from the one Flink extracts from its signature. */
    static TypeInference typeInference(TypeInference extracted) {
        List<StaticArgument> declared = extracted.getStaticArguments().orElseThrow();
        return TypeInference.newBuilder()
                .staticArguments(declared)
                .stateTypeStrategies(extracted.getStateTypeStrategies())
                .inputTypeStrategy(new DedupArgumentChecks())
                .outputTypeStrategy(DedupArguments.outputTypeStrategy(declared))
                .build();
    }
}
