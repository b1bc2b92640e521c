package io.bloomstream.flink.dedup;

import io.bloomstream.flink.internal.RefusedRestore;
import io.bloomstream.flink.internal.ShapeRecord;
import io.bloomstream.flink.state.StateLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;

/**
 * The shape of a dedup operator's state, written into its savepoints as one line of {@code
 * name=value} fields (operator state {@link DedupFunction#SHAPE_STATE}) and checked when a job
 * restores from them.
 *
 * <p>Fields a restore may not change, because the existing state would be read wrongly: {@code
 * strategy} and {@code seed} (every page would be probed at other bits), {@code shards} (ids would
 * be routed to other shards, so duplicates would pass), {@code timeDomain} (retention on or off, or
 * event against processing time: the recorded buckets count another clock). A change of one of them
 * fails the restore for good (a {@code SuppressRestartsException}: no restart can fix it) with the
 * field, the savepoint's value and the new one.
 *
 * <p>Fields a restore may change, because each key's state records what it needs to read its own
 * pages: {@code expectedItems}, {@code fpp}, {@code pageBits}, {@code growth} (existing cascade
 * stages keep their shape, new stages take the new config), {@code generations} and {@code
 * generationMillis} (a key keeps its generation length until its state is freed; new keys take the
 * new one), {@code retentionMillis} and {@code allowedLatenessMillis} (they apply from the restore
 * on; ids already forgotten under a shorter old retention stay forgotten). These changes are
 * logged.
 *
 * <p>Exact mode ({@code exact}) may be switched either way at a restore, and the switch is logged.
 * On: ids added before the switch have no exact entries, so a duplicate of one of them may pass
 * once more (exact mode prefers passing to dropping); ids added from then on are judged exactly.
 * Off: the exact entries stay in state, unread, until their generation expires (without retention:
 * for ever), and are read again if exact mode is switched back on. {@code exactEntries} records
 * whether the state may hold exact entries (exact mode now or at any earlier snapshot), so that a
 * job without exact mode still drops them with their generation.
 *
 * <p>Versions (the {@code version} field; the <em>dedup shape</em>, counted apart from the metadata
 * format of each key): {@link #VERSION_1}, no record, {@link #VERSION_2}, the record, {@link
 * #VERSION_3}, exact mode, and {@link #VERSION_4}, {@link FirstBy}. A record of version 2 restores
 * as one without exact entries, one of version 2 or 3 as one without waiting events.
 *
 * <p>{@code firstBy} may be switched either way at a restore, and the switch is logged; {@code
 * pendingEvents} records whether the state may hold events waiting for the watermark ({@link
 * FirstBy#EVENT_TIME} now or at any earlier snapshot), so that a job restored with {@link
 * FirstBy#ARRIVAL} still judges them at their timers.
 */
@Internal
final class StateShape {

    /**
     * The dedup shape of bloomstream 0.1: no record at all (its state restores unchecked). The
     * number is never written.
     */
    static final int VERSION_1 = 1;

    /**
     * The first record (bloomstream 0.2 on), numbered 2 after the metadata format of its day; the
     * two have counted apart since (docs/state.md, "Versioned artefacts").
     */
    static final int VERSION_2 = 2;

    /** The fields {@code exact} and {@code exactEntries} (exact mode, bloomstream 0.5 on). */
    static final int VERSION_3 = 3;

    /**
     * The fields {@code firstBy} ({@link FirstBy}) and {@code pendingEvents} (whether the state may
     * hold events waiting for the watermark in {@link DedupFunction#PENDING_STATE}), bloomstream
     * 0.5 on. A record of version 2 or 3 restores as state without waiting events.
     */
    static final int VERSION_4 = 4;

    /** The version of the record this bloomstream writes. */
    static final int VERSION = VERSION_4;

    private static final String EXACT = "exact";
    private static final String EXACT_ENTRIES = "exactEntries";
    private static final String FIRST_BY = "firstBy";
    private static final String PENDING_EVENTS = "pendingEvents";

    /** The {@code shards} value of per-key dedup. */
    private static final String SHARDS_PER_KEY = "none (per key)";

    private static final String[] FIXED = {"strategy", "seed", "shards", "timeDomain"};

    private final Map<String, String> fields;

    private StateShape(Map<String, String> fields) {
        this.fields = fields;
    }

    static StateShape of(DedupConfig config, int shards) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("version", Integer.toString(VERSION));
        f.put("strategy", config.hasher().strategy().name());
        f.put("seed", "0x" + Long.toHexString(config.hasher().seed()));
        f.put("shards", shards == 0 ? SHARDS_PER_KEY : Integer.toString(shards));
        f.put("timeDomain", StateLayout.domainName(StateLayout.domainOf(config.retentionPolicy())));
        f.put("retentionMillis", Long.toString(config.retentionMillis()));
        f.put("generations", Integer.toString(config.generations()));
        f.put("generationMillis", Long.toString(config.generationMillis()));
        f.put("allowedLatenessMillis", Long.toString(config.allowedLateness().toMillis()));
        f.put("expectedItems", Long.toString(config.expectedItems()));
        f.put("fpp", Double.toString(config.fpp()));
        f.put("pageBits", Integer.toString(config.pageBits()));
        f.put("growth", config.growth().name());
        f.put(FIRST_BY, config.firstBy().name());
        f.put(PENDING_EVENTS, Boolean.toString(config.firstBy() == FirstBy.EVENT_TIME));
        f.put(EXACT, Boolean.toString(config.exact()));
        f.put(EXACT_ENTRIES, Boolean.toString(config.exact()));
        return new StateShape(f);
    }

    /**
     * This shape, recording that the state may hold exact entries (exact mode now, or in the state
     * it restored).
     */
    StateShape withExactEntries() {
        Map<String, String> f = new LinkedHashMap<>(fields);
        f.put(EXACT_ENTRIES, "true");
        return new StateShape(f);
    }

    /** Whether state of this recorded shape may hold exact entries (false before version 3). */
    boolean mayHoldExactEntries() {
        return Boolean.parseBoolean(fields.get(EXACT_ENTRIES))
                || Boolean.parseBoolean(fields.get(EXACT));
    }

    /** This shape, recording that the state may hold events waiting for the watermark. */
    StateShape withPendingEvents() {
        Map<String, String> f = new LinkedHashMap<>(fields);
        f.put(PENDING_EVENTS, "true");
        return new StateShape(f);
    }

    /** Whether state of this recorded shape may hold waiting events (false before version 4). */
    boolean mayHoldPendingEvents() {
        return Boolean.parseBoolean(fields.get(PENDING_EVENTS))
                || FirstBy.EVENT_TIME.name().equals(fields.get(FIRST_BY));
    }

    String encode() {
        return ShapeRecord.encode(fields);
    }

    static StateShape decode(String text) {
        return new StateShape(ShapeRecord.decode(text));
    }

    /**
     * Checks a restore from state of shape {@code recorded} under this shape.
     *
     * @throws org.apache.flink.runtime.execution.SuppressRestartsException (no restart can fix it)
     *     around an {@link IllegalStateException} naming the field, its recorded value and the new
     *     one, when the restore would read the state wrongly
     */
    void checkRestore(StateShape recorded, Logger log) {
        ShapeRecord.checkVersion(recorded.fields, "dedup state", VERSION);
        for (String name : FIXED) {
            String was = recorded.fields.get(name);
            String now = fields.get(name);
            if (!Objects.equals(was, now)) {
                throw RefusedRestore.of(
                        "cannot restore dedup state: field "
                                + name
                                + " was "
                                + display(was)
                                + " in the savepoint and is "
                                + display(now)
                                + " in the job's config"
                                + (name.equals("timeDomain")
                                        ? " (retentionMillis "
                                                + recorded.fields.get("retentionMillis")
                                                + " and "
                                                + fields.get("retentionMillis")
                                                + ")"
                                        : "")
                                + (name.equals("shards") && (isPerKey(was) != isPerKey(now))
                                        ? " (" + modeSwitch(isPerKey(now), "") + ")"
                                        : "")
                                + (name.equals("strategy")
                                        ? " (set DedupConfig.Builder#hashStrategy(HashStrategy."
                                                + was
                                                + "); state of bloomstream 0.4 and before was"
                                                + " written with XXH3_128)"
                                        : "")
                                + "; restore with the savepoint's "
                                + name
                                + " (changing it would let duplicates pass or drop first"
                                + " occurrences)");
            }
        }
        boolean wasExact = Boolean.parseBoolean(recorded.fields.get(EXACT));
        boolean isExact = Boolean.parseBoolean(fields.get(EXACT));
        if (!wasExact && isExact) {
            log.info(
                    "Restoring dedup state with exact mode switched on: ids added before the"
                            + " switch have no exact entries, so a duplicate of one of them may"
                            + " pass once more (exact mode prefers passing to dropping); ids added"
                            + " from now on are judged exactly");
        } else if (wasExact && !isExact) {
            log.info(
                    "Restoring dedup state with exact mode switched off: duplicates are judged by"
                            + " the Bloom filters alone again; the exact entries stay in state,"
                            + " unread (read again if exact mode is switched back on), until their"
                            + " generation expires (without retention: for ever)");
        }
        String wasFirstBy = recorded.fields.getOrDefault(FIRST_BY, FirstBy.ARRIVAL.name());
        if (!wasFirstBy.equals(fields.get(FIRST_BY))) {
            log.info(
                    "Restoring dedup state with firstBy changed from {} to {}: events that were"
                            + " waiting for the watermark are still judged at their timers; events"
                            + " from now on are judged {}",
                    wasFirstBy,
                    fields.get(FIRST_BY),
                    FirstBy.EVENT_TIME.name().equals(fields.get(FIRST_BY))
                            ? "when the watermark passes them, earliest event time first"
                            : "as they arrive");
        }
        for (Map.Entry<String, String> e : fields.entrySet()) {
            String was = recorded.fields.get(e.getKey());
            if (e.getKey().equals("version")
                    || e.getKey().equals(EXACT)
                    || e.getKey().equals(EXACT_ENTRIES)
                    || e.getKey().equals(FIRST_BY)
                    || e.getKey().equals(PENDING_EVENTS)) {
                continue; // an older record restores as such; exact mode, firstBy logged above
            }
            if (was != null && !was.equals(e.getValue())) {
                log.info(
                        "Restoring dedup state with field {} changed from {} to {}: existing"
                                + " filters keep their recorded shape, new ones take the new"
                                + " config",
                        e.getKey(),
                        was,
                        e.getValue());
            }
        }
    }

    /**
     * Refuses, for good, a restore whose keyed state was written with keys of another serializer
     * ({@code was}) than the job's ({@code now}): Flink's backend would refuse it with its own
     * {@code StateMigrationException}, which the restart strategy retries for ever. Global mode's
     * keys are INT shards, so its state under per-key mode's uid (or the reverse) is the usual
     * cause.
     *
     * @param shards the job's shard count, 0 per key
     */
    static RuntimeException refuseKeys(String was, String now, int shards) {
        String cause;
        if (shards > 0) {
            cause = modeSwitch(false, "");
        } else if (was.equals("IntSerializer")) {
            cause = modeSwitch(true, " (or of BloomDedup.perKey with Integer keys)");
        } else {
            cause =
                    "the key type of BloomDedup.perKey's keyBy changed; restore with the"
                            + " savepoint's key type, or start under a new uid with"
                            + " BloomDedup.withUidPrefix";
        }
        return RefusedRestore.of(
                "cannot restore dedup state: its keys were written by "
                        + was
                        + " and the job's keys are read by "
                        + now
                        + " ("
                        + cause
                        + ")");
    }

    /**
     * Says that a savepoint of one mode was restored into the other, and what to do.
     *
     * @param nowPerKey whether the job is per key (the savepoint then global)
     * @param wasAlso said after the savepoint's mode
     */
    private static String modeSwitch(boolean nowPerKey, String wasAlso) {
        return "a savepoint of BloomDedup."
                + (nowPerKey ? "global" : "perKey")
                + wasAlso
                + " restored into BloomDedup."
                + (nowPerKey ? "perKey" : "global")
                + ": the two modes keep different state under one uid, by default "
                + BloomDedup.DEFAULT_UID
                + "; restore it into the mode that wrote it, or start the other mode under its"
                + " own uid with BloomDedup.withUidPrefix";
    }

    private static boolean isPerKey(String shards) {
        return SHARDS_PER_KEY.equals(shards);
    }

    /** A value for a message: hexadecimal seeds also in decimal, as the config takes them. */
    private static String display(String value) {
        if (value != null && value.startsWith("0x")) {
            try {
                return Long.parseUnsignedLong(value.substring(2), 16) + " (" + value + ")";
            } catch (NumberFormatException e) {
                return value;
            }
        }
        return value;
    }

    @Override
    public String toString() {
        return encode();
    }
}
