package io.bloomstream.table.internal;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.internal.EventTimes;
import io.bloomstream.flink.internal.TimeMath;
import io.bloomstream.flink.state.FilterMeta;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.functions.ProcessTableFunction;
import org.apache.flink.table.functions.TableSemantics;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one task of {@code BLOOM_DEDUP} ({@code io.bloomstream.table.DedupTableFunction}) does with
 * a row and a timer: the function declares the signature, the state and the arguments Flink sees,
 * and hands each call here with its state entries. Its guarantee, state and arguments are described
 * on the function. Not thread-safe: one per function instance.
 */
@Internal
public final class SqlDedupRun {

    /** Logs under the function's name, as before the split. */
    private static final Logger LOG =
            LoggerFactory.getLogger("io.bloomstream.table.DedupTableFunction");

    private final SqlDedupState state;
    private final LongSupplier clock;
    private final Consumer<Row> out;
    private final PartitionKey partitionKey = new PartitionKey();
    private final EventTimes eventTimes = new EventTimes(LOG, "BLOOM_DEDUP with on_time");
    private DedupStateCache cache; // sized by the first row's config
    private SqlDedupStore store;
    private RowIds ids;
    private PendingRows pending;
    private DedupArguments.FirstBy firstBy;
    private boolean configured;
    private boolean configuredByRow;
    private boolean onTime;
    private String idColumnName;
    private int[] keyColumns;
    private int[] outputColumns;

    /** The current call's state entries. */
    private SqlDedupViews views;

    /**
     * @param group where the dedup metrics go
     * @param clock the processing-time clock of a retention without {@code on_time}
     * @param out where returned rows go (the function's {@code collect})
     */
    public SqlDedupRun(MetricGroup group, LongSupplier clock, Consumer<Row> out) {
        this.state = new SqlDedupState(group);
        this.clock = clock;
        this.out = out;
    }

    /** Whether a row has configured the run (else the next row must: {@link #configureByRow}). */
    public boolean configuredByRow() {
        return configuredByRow;
    }

    /** Configures the run for the call of the current row. */
    public void configureByRow(TableSemantics semantics, DedupCall call) throws Exception {
        configure(semantics, call);
        configuredByRow = true;
    }

    /** Judges one row (see the function's comment). */
    public void eval(ProcessTableFunction.Context ctx, SqlDedupViews views, Row input)
            throws Exception {
        this.views = views;
        state.recordIn();
        DedupConfig config = state.config();
        long time = 0;
        long horizon = 0;
        ProcessTableFunction.TimeContext<Long> timeCtx = null;
        if (onTime) {
            timeCtx = ctx.timeContext(Long.class);
            Long t = eventTimes.of(timeCtx.time());
            if (t == null) {
                state.rejected("no event time in the on_time column", input);
                return;
            }
            Long wm = timeCtx.currentWatermark();
            long watermark = wm == null ? Long.MIN_VALUE : wm;
            // Flink's rule: a row below the watermark is late. Flink 2.2 drops rows at or before
            // the watermark before eval() (FLINK-39436); later versions pass them.
            if (watermark != Long.MIN_VALUE && t < watermark) {
                state.late("late: event time " + t + " is before watermark " + watermark, input);
                return;
            }
            time = t;
            horizon = watermark;
        } else if (config.hasRetention()) {
            time = clock.getAsLong(); // processing-time retention
            horizon = time;
        }
        ids.bind(input);
        if (!ids.usable()) {
            state.rejected("empty id in column " + idColumnName, input);
            return;
        }
        if (firstBy == DedupArguments.FirstBy.EVENT_TIME) {
            if (!config.hasRetention() && rememberedOnArrival(input)) {
                return;
            }
            pending.add(views.pending, time, input); // judged when the watermark passes it
            timeCtx.registerOnTime(time);
            return;
        }
        judge(input, time, horizon, timeCtx);
    }

    /**
     * Configures the function for {@code call}: the first row's, or, in a timer that fires before
     * any row reached a restored task, the call recorded with the rows it buffered.
     */
    private void configure(TableSemantics semantics, DedupCall call) throws Exception {
        onTime = semantics.timeColumn() >= 0;
        DedupConfig config = call.config(onTime);
        firstBy = call.firstBy(onTime);
        state.configure(config, config.expectedItems());
        cache = DedupStateCache.forConfig(config);
        store = new SqlDedupStore(cache);
        if (config.timeDomain() == TimeDomain.EVENT_TIME) {
            store.recordTimerConfig(config.retentionMillis(), config.generations());
        }
        DataType type = semantics.dataType();
        List<String> names = DataType.getFieldNames(type);
        int[] idColumns = DedupArguments.idColumns(call.idColumn(), names);
        DedupArguments.IdKind[] kinds = new DedupArguments.IdKind[idColumns.length];
        for (int i = 0; i < kinds.length; i++) {
            kinds[i] =
                    DedupArguments.idKind(
                            DataType.getFieldDataTypes(type).get(idColumns[i]).getLogicalType());
        }
        ids = new RowIds(idColumns, kinds);
        idColumnName = call.idColumn();
        keyColumns = semantics.partitionByColumns();
        outputColumns = new int[names.size() - keyColumns.length];
        int j = 0;
        for (int i = 0; i < names.size(); i++) {
            if (!DedupArguments.contains(keyColumns, i)) {
                outputColumns[j++] = i;
            }
        }
        // Also under 'ARRIVAL': rows a restored 'EVENT_TIME' call left waiting are judged.
        pending = new PendingRows(type, call);
        configured = true;
    }

    /**
     * Judges the row {@link #ids} is bound to, at {@code time}, through the cache: returns it if it
     * is a first occurrence, and registers the cleanup timer of a generation it opened.
     */
    private void judge(
            Row input, long time, long horizon, ProcessTableFunction.TimeContext<Long> timeCtx)
            throws Exception {
        DedupConfig config = state.config();
        DedupStateCache.Entry entry = bind(input);
        try {
            boolean eventTime = config.timeDomain() == TimeDomain.EVENT_TIME;
            if (config.hasRetention() && !eventTime) {
                // No processing-time timers for a PTF: a key's expired generations go when it is
                // next seen.
                state.expireAt(store, time);
            }
            partitionKey.row = input;
            if (state.addIfAbsent(store, partitionKey, ids, time, horizon)) {
                out.accept(project(input));
            }
            long expiry = state.newExpiry(); // one cleanup timer per key and generation
            if (expiry != Long.MIN_VALUE && eventTime && timeCtx != null) {
                timeCtx.registerOnTime(expiry);
            }
        } finally {
            cache.trim(entry);
        }
    }

    /**
     * Binds the store to {@code input}'s partition key (its state of an older layout moved when
     * first read) and to the bound id's exact key; returns the key's cache entry, to trim
     * afterwards.
     */
    private DedupStateCache.Entry bind(Row input) throws Exception {
        DedupStateCache.Entry entry = cache.entry(DedupStateCache.keyOf(partitionColumns(input)));
        store.bind(views, entry);
        store.exactKey(state.config().exact() ? ids.exactKey() : null);
        return entry;
    }

    /**
     * Whether the bound row, arriving under {@code first_by => 'EVENT_TIME'} without retention, is
     * a duplicate of an id already remembered, counted as such: then no row of its id can be
     * returned any more (the filter only grows), so it need not wait for the watermark.
     */
    private boolean rememberedOnArrival(Row input) throws Exception {
        DedupStateCache.Entry entry = bind(input);
        try {
            return state.duplicateOfRemembered(store, ids);
        } finally {
            cache.trim(entry);
        }
    }

    /**
     * Judges the rows that wait for this time ({@code first_by => 'EVENT_TIME'}), in their order of
     * arrival, then frees the current key's expired generations (event-time retention only).
     */
    public void onTimer(ProcessTableFunction.OnTimerContext ctx, SqlDedupViews views)
            throws Exception {
        this.views = views;
        ProcessTableFunction.TimeContext<Long> timeCtx = ctx.timeContext(Long.class);
        long time = timeCtx.time();
        byte[] waiting = views.pending.get(time);
        if (waiting != null) {
            if (!configured) {
                configure(
                        ctx.tableSemanticsFor(DedupArguments.INPUT),
                        PendingRows.callOf(waiting, time));
            }
            views.pending.remove(time);
            List<Row> rows = pending.decode(waiting, time);
            Long wm = timeCtx.currentWatermark();
            long horizon = wm == null ? time : Math.max(wm, time);
            for (Row row : rows) {
                ids.bind(row);
                judge(row, time, horizon, timeCtx);
            }
            if (state.config().hasRetention()
                    && state.config().timeDomain() == TimeDomain.EVENT_TIME) {
                expire(timeCtx, rows.get(0));
            }
            return;
        }
        expireUncached(timeCtx);
    }

    /** Frees the expired generations of {@code row}'s key, through the cache. */
    private void expire(ProcessTableFunction.TimeContext<Long> timeCtx, Row row) throws Exception {
        DedupStateCache.Entry entry = cache.entry(DedupStateCache.keyOf(partitionColumns(row)));
        store.bind(views, entry);
        try {
            for (long expiry : state.expireAt(store, timeCtx.time())) {
                timeCtx.registerOnTime(expiry);
            }
        } finally {
            cache.trim(entry);
        }
    }

    /** Frees the current key's expired generations, on state (a timer cannot name its key). */
    private void expireUncached(ProcessTableFunction.TimeContext<Long> timeCtx) throws Exception {
        // What the cache holds of the timer's key would be stale afterwards.
        if (cache != null) {
            cache.clear();
        }
        views.moveFromLayout5();
        SqlDedupStore timerStore = store;
        if (state.config() == null) {
            // Restored, and no row has reached this task yet: free under the config the key's
            // state was written with; the first row brings the call's config.
            DedupConfig recorded = recordedConfig(views.meta.get(SqlDedupLayout.TIMER_CONFIG_KEY));
            if (recorded == null) {
                deferCleanup(timeCtx, views.storedMeta()); // layouts 2 and 3: it was in the row
                return;
            }
            state.configure(recorded, DedupConfig.DEFAULT_EXPECTED_ITEMS);
        }
        if (!state.config().hasRetention()
                || state.config().timeDomain() != TimeDomain.EVENT_TIME) {
            return; // an emit timer whose rows are gone (judged at an earlier firing)
        }
        if (timerStore == null) {
            timerStore = new SqlDedupStore(null);
            timerStore.recordTimerConfig(
                    state.config().retentionMillis(), state.config().generations());
        }
        timerStore.bind(views, null);
        for (long expiry : state.expireAt(timerStore, timeCtx.time())) {
            timeCtx.registerOnTime(expiry);
        }
    }

    /**
     * Puts off the cleanup timer of a key of layout 2 or 3 that fires before any row reached a
     * restored task: those layouts kept the retention in the row, which the function no longer
     * declares, so nothing says which generations have expired. The timer comes back one generation
     * length later (past the current watermark), until a row has brought the call's config; the
     * key's state is then freed at the first firing after it, never early. At the end of the input
     * (a watermark of {@link Long#MAX_VALUE}) no row can come: the state is kept.
     */
    private static void deferCleanup(
            ProcessTableFunction.TimeContext<Long> timeCtx, FilterMeta meta) {
        if (meta == null
                || meta.domain != FilterMeta.DOMAIN_EVENT_TIME
                || meta.generationMillis <= 0) {
            return; // no event-time retention: no cleanup to do
        }
        Long wm = timeCtx.currentWatermark();
        long now = Math.max(timeCtx.time(), wm == null ? Long.MIN_VALUE : wm);
        if (now != Long.MAX_VALUE) {
            timeCtx.registerOnTime(TimeMath.plus(now, meta.generationMillis));
        }
    }

    /** The values of the partition columns of {@code input}. */
    private Object[] partitionColumns(Row input) {
        Object[] key = new Object[keyColumns.length];
        for (int i = 0; i < key.length; i++) {
            key[i] = input.getField(keyColumns[i]);
        }
        return key;
    }

    /**
     * The config recorded with a key's state ({@link SqlDedupLayout#TIMER_CONFIG_KEY}), or null.
     */
    private static DedupConfig recordedConfig(byte[] timerConfig) throws java.io.IOException {
        if (timerConfig == null) {
            return null;
        }
        return DedupConfig.builder()
                .retention(
                        Duration.ofMillis(SqlDedupLayout.timerRetentionMillis(timerConfig)),
                        TimeDomain.EVENT_TIME)
                .generations(SqlDedupLayout.timerGenerations(timerConfig))
                .build();
    }

    /**
     * The current row's partition key as the filter state sees it: only a new key's bucket phase
     * uses it, through {@link #hashCode} (deterministic), so the key columns are read only then.
     * One instance is reused for every row: the state keeps no reference to it (no metadata cache).
     */
    private final class PartitionKey {
        Row row;

        @Override
        public int hashCode() {
            return java.util.Arrays.deepHashCode(partitionColumns(row));
        }

        @Override
        public boolean equals(Object o) {
            return o == this;
        }
    }

    private Row project(Row input) {
        Row out = new Row(outputColumns.length);
        for (int i = 0; i < outputColumns.length; i++) {
            out.setField(i, input.getField(outputColumns[i]));
        }
        return out;
    }
}
