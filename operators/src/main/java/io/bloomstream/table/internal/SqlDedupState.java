package io.bloomstream.table.internal;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.dedup.DedupJudges;
import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.flink.internal.RejectLog;
import io.bloomstream.flink.state.FilterJudge;
import io.bloomstream.flink.state.FilterStore;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.MetricGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dedup judge and metrics of the DataStream operator ({@link FilterJudge}, {@link
 * DedupMetrics}) for the SQL function {@code io.bloomstream.table.DedupTableFunction}, which keeps
 * its pages and metadata in its own state entries, judged through a {@link SqlDedupStore} bound to
 * the current key.
 *
 * <p>New keys are hashed with {@link #NEW_KEY_STRATEGY}; a key whose state records another strategy
 * (XXH3-128: state of bloomstream 0.4, and of 0.5 snapshots before it moved) keeps it, so state of
 * every release restores without a setting (SQL users have none to set).
 */
@Internal
public final class SqlDedupState {

    private static final Logger LOG = LoggerFactory.getLogger(SqlDedupState.class);

    /** The hash strategy of keys new to the state: the config's default, as the DataStream's. */
    public static final HashStrategy NEW_KEY_STRATEGY = DedupConfig.DEFAULT_HASH_STRATEGY;

    private final DedupMetrics metrics;
    private final RejectLog rejectLog = new RejectLog(LOG, DedupMetrics.REJECTED);
    private final RejectLog lateLog = new RejectLog(LOG, DedupMetrics.LATE);
    private final long run = FilterJudge.newRunId();
    private FilterJudge judge;
    private DedupConfig config;

    /** Registers the dedup metrics ({@link DedupMetrics}) in {@code group}. */
    public SqlDedupState(MetricGroup group) {
        this.metrics = new DedupMetrics(group);
    }

    /**
     * Judges under {@code config} (its hash strategy for new keys), with filters sized for {@code
     * itemsPerKey} ids per key. May be called again with another config (the run, which marks the
     * keys counted in {@code bloomAllocatedPages}, stays the same).
     */
    public void configure(DedupConfig config, long itemsPerKey) {
        this.config = config;
        this.judge = DedupJudges.create(config, itemsPerKey, metrics, run, true);
    }

    /** The config of the last {@link #configure}, or null. */
    public DedupConfig config() {
        return config;
    }

    /** Counts a record in. */
    public void recordIn() {
        metrics.recordsIn.inc();
    }

    /** Counts and logs (rate-limited) a row without a usable id or timestamp. */
    public void rejected(String reason, Object row) {
        metrics.rejected.inc();
        rejectLog.rejected(metrics.rejected.getCount(), reason, row);
    }

    /** Counts and logs (rate-limited) a late row. */
    public void late(String reason, Object row) {
        metrics.late.inc();
        lateLog.rejected(metrics.late.getCount(), reason, row);
    }

    /**
     * Adds the id unless an occurrence within the retention is remembered, counting the row as
     * passed or duplicate; see {@link FilterJudge#addIfAbsent}.
     *
     * @param store the store bound to the current key
     * @param key the current key: only its hash code is used (for the bucket phase of a new key)
     * @return true for a first occurrence
     */
    public boolean addIfAbsent(
            FilterStore store, Object key, FilterJudge.IdHash id, long time, long horizon)
            throws Exception {
        boolean first = judge.addIfAbsent(store, key, id, time, horizon);
        if (first) {
            metrics.passed.inc();
        } else {
            metrics.duplicates.inc();
        }
        return first;
    }

    /**
     * Whether the current key remembers the id (no retention only), counting the row as a duplicate
     * if it does; see {@link FilterJudge#remembers}.
     */
    public boolean duplicateOfRemembered(FilterStore store, FilterJudge.IdHash id)
            throws Exception {
        if (judge.remembers(store, id)) {
            metrics.duplicates.inc();
            return true;
        }
        return false;
    }

    /** The expiry of the generation the last add opened or widened, or {@link Long#MIN_VALUE}. */
    public long newExpiry() {
        return judge.newExpiry();
    }

    /**
     * Frees the generations of the current key expired at {@code time}; returns the expiry times of
     * those left. See {@link FilterJudge#expireAt}.
     */
    public long[] expireAt(FilterStore store, long time) throws Exception {
        return judge.expireAt(store, time);
    }
}
