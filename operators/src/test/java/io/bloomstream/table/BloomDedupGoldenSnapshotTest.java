package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.dedup.DedupScenario.Base;
import io.bloomstream.flink.dedup.DedupScenario.Mode;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Restores the committed snapshots of the operator that Flink's planner makes for a {@code
 * BLOOM_DEDUP} call ({@link PtfHarness}), on the heap and RocksDB backends: the state names, types
 * and serializers of every released state layout of {@link DedupTableFunction} must stay
 * restorable. After the restore every id of the snapshot is a duplicate and new ids pass (up to the
 * false-positive rate).
 *
 * <p>Files {@code sql-dedup-LAYOUT-CASE-BACKEND.snapshot} under {@code
 * src/test/resources/savepoints}, one set per version of the SQL dedup layout ({@link
 * io.bloomstream.table.internal.SqlDedupLayout}). Layout 1 is the state of bloomstream 0.4: {@code
 * bloom_meta} a row with the whole {@code FilterMeta} as BYTES, {@code bloom_pages} a {@code
 * MapView<Long, long[]>}. Layout 2 keeps the row for the config and puts the metadata and pages in
 * {@code MapView}s of BYTES. Layout 3 stores the metadata of a key without retention under the
 * deferred key of {@code bloom_meta_v2} (its item counts may lag; read back with the lag counted).
 * Layout 4 keeps only a marker in the row and records a retention beside the metadata. Layout 5
 * adds the exact entries of {@code exact => TRUE} in {@code bloom_exact}: its {@code exact_*} files
 * are restored in exact mode, where an id of the snapshot is a duplicate only if its exact entry
 * was restored, and each new id passes (no false positives). Layout 6 moves the entries of layout 5
 * to new names declared without Flink's state TTL, and drops the row. A key of an older layout
 * moves to layout 6 when first seen, and the test restores what the restored task wrote as well.
 * Layout 1 restores only through the deprecated {@link LegacyDedupTableFunction}, which reads its
 * row. Files of layouts 1 to 3 hash ids with XXH3-128; {@code 3-xxh3_64} and {@code 4-xxh3_64} hash
 * new keys with XXH3-64 ({@link io.bloomstream.table.internal.SqlDedupState#NEW_KEY_STRATEGY}): a
 * restored key keeps the strategy it records, which the ids all found again after a restore show
 * (under another hash almost none would be). Write the current files (only those) with {@code
 * -Dbloomstream.writeSnapshots=true}.
 *
 * <p>The operator's uid does not matter here (a harness restores one operator's state); in a job,
 * the PTF's {@code uid} argument names it (see docs/sql-dedup.md).
 */
class BloomDedupGoldenSnapshotTest {

    /** Ids in each snapshot: {@value}, over {@value #KEYS} partition keys. */
    private static final int IDS = 1000;

    private static final int KEYS = 5;

    /** The event time of row 0. */
    private static final long T0 = 1_700_000_000_000L;

    /**
     * The layouts with committed files, oldest first (and the hash of new keys, if not XXH3-128).
     */
    private static final String[] LAYOUTS = {
        "1", "2", "3", "3-xxh3_64", "4-xxh3_64", "5-xxh3_64", "6-xxh3_64"
    };

    /** The files this release writes. */
    private static final String CURRENT =
            io.bloomstream.table.internal.SqlDedupLayout.CURRENT_VERSION
                    + "-"
                    + io.bloomstream.table.internal.SqlDedupState.NEW_KEY_STRATEGY
                            .name()
                            .toLowerCase(java.util.Locale.ROOT);

    /** A case of the snapshots: a call's arguments. */
    enum Case {
        /** No retention: one generation. */
        PLAIN(
                new Base(
                        Mode.NO_RETENTION,
                        0,
                        2,
                        0,
                        false,
                        100,
                        1,
                        FilterSpec.AUTO_PAGE_BITS,
                        0,
                        Hasher.DEFAULT_SEED,
                        0L)),
        /** Event-time retention of 30 s in 3 generations: cleanup timers in the snapshot. */
        RETENTION(
                new Base(
                        Mode.EVENT_TIME,
                        30_000,
                        3,
                        0,
                        false,
                        100,
                        1,
                        FilterSpec.AUTO_PAGE_BITS,
                        0,
                        Hasher.DEFAULT_SEED,
                        0L)),
        /** PLAIN with {@code exact => TRUE} (layout 5 on): exact entries in one generation. */
        EXACT_PLAIN(PLAIN.base, true),
        /** RETENTION with {@code exact => TRUE}: exact entries in the generations' slots. */
        EXACT_RETENTION(RETENTION.base, true);

        final Base base;

        /** Whether the call has {@code exact => TRUE}. */
        final boolean exact;

        Case(Base base, boolean exact) {
            this.base = base;
            this.exact = exact;
        }

        Case(Base base) {
            this(base, false);
        }

        /** The planned call of this case, with the table options {@code options}. */
        PtfHarness.Plan plan(java.util.Map<String, String> options) {
            return plan(DedupTableFunction.class);
        }

        /** The planned call of this case, {@code BLOOM_DEDUP} the function {@code function}. */
        PtfHarness.Plan plan(
                Class<? extends org.apache.flink.table.functions.ProcessTableFunction<Row>>
                        function) {
            return BloomDedupModelRun.plan(
                    base, java.util.Map.of(), exact ? ", exact => TRUE" : "", function);
        }

        /**
         * The planned call of this case for files of {@code layout}: layout 1 (bloomstream 0.4)
         * only through the deprecated function that reads its row.
         */
        @SuppressWarnings("deprecation")
        PtfHarness.Plan planFor(String layout) {
            return plan(
                    layout.equals("1") ? LegacyDedupTableFunction.class : DedupTableFunction.class);
        }

        /** Whether files of {@code layout} hold this case (exact mode: from layout 5 on). */
        boolean in(String layout) {
            return !exact || layout.compareTo("5") >= 0;
        }

        Path file(String layout, Backend backend) {
            return Path.of(
                    "src/test/resources/savepoints/sql-dedup-"
                            + layout
                            + "-"
                            + name().toLowerCase()
                            + "-"
                            + backend.name().toLowerCase()
                            + ".snapshot");
        }
    }

    /** Row i: key k(i mod 5), id i, event time 10 ms apart (1000 rows span 10 s < 30 s). */
    static RowData row(PtfHarness.Plan plan, int i) {
        GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), StringData.fromString("k" + (i % KEYS)));
        row.setField(plan.column("id"), StringData.fromString(Integer.toString(i)));
        row.setField(plan.column("seq"), (long) i);
        row.setField(plan.column("ts"), TimestampData.fromEpochMillis(T0 + 10L * i));
        return row;
    }

    static PtfHarness harness(PtfHarness.Plan plan, Backend backend) throws Exception {
        PtfHarness h = new PtfHarness(plan, new HarnessMetrics(128, 1, 0).environment());
        h.setStateBackend(backend.create());
        h.setupOutput();
        return h;
    }

    /** A harness of {@code plan} restored from the file of {@code layout} and {@code c}, open. */
    static PtfHarness restored(PtfHarness.Plan plan, Case c, String layout, Backend backend)
            throws Exception {
        PtfHarness h = harness(plan, backend);
        h.initializeState(OperatorSnapshotUtil.readStateHandle(c.file(layout, backend).toString()));
        h.open();
        return h;
    }

    static long returned(PtfHarness h) {
        long n = h.getOutput().stream().filter(o -> o instanceof StreamRecord).count();
        h.getOutput().clear();
        return n;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresEveryCommittedLayout(Backend written) throws Exception {
        for (String layout : LAYOUTS) {
            for (Case c : Case.values()) {
                if (!c.in(layout)) {
                    continue;
                }
                PtfHarness.Plan plan = c.planFor(layout);
                // a snapshot written on one backend restores on the same backend
                try (PtfHarness h = restored(plan, c, layout, written)) {
                    for (int i = 0; i < IDS; i++) {
                        h.processElement(row(plan, i));
                    }
                    assertThat(returned(h))
                            .as("layout %s %s: every id of the snapshot is remembered", layout, c)
                            .isZero();
                    // Row IDS again is new to the snapshot; each new id once, then again.
                    for (int i = IDS; i < IDS + 100; i++) {
                        h.processElement(row(plan, i));
                    }
                    // 100 new ids, rate <= 1% (the cascade's bound): 4.5 sigma allows 5 drops;
                    // in exact mode none (and every id of the snapshot was found above only if
                    // its exact entry was restored: a filter's maybe alone passes it).
                    assertThat(returned(h))
                            .as("layout %s %s: new ids", layout, c)
                            .isBetween(c.exact ? 100L : 95L, 100L);
                    for (int i = IDS; i < IDS + 100; i++) {
                        h.processElement(row(plan, i));
                    }
                    assertThat(returned(h)).as("layout %s %s: new ids again", layout, c).isZero();
                    // What the restored task wrote (layout 6 after a move) restores with the
                    // current function (for layout 1: what the legacy function wrote).
                    var again = h.snapshot(2, 2);
                    PtfHarness.Plan current = c.plan(DedupTableFunction.class);
                    try (PtfHarness h2 = harness(current, written)) {
                        h2.initializeState(again);
                        h2.open();
                        for (int i = 0; i < IDS + 100; i++) {
                            h2.processElement(row(current, i));
                        }
                        assertThat(returned(h2))
                                .as("layout %s %s: restored again", layout, c)
                                .isZero();
                    }
                }
            }
        }
    }

    /**
     * Every key of a restored older layout moves to layout 6 when a row of it is seen: its metadata
     * is then in {@value DedupTableFunction#META_V6_STATE} and the entries of layouts 2 to 5 are
     * empty. Layout 1 moves through the deprecated function, which keeps a marker row per key (and
     * only then); the current function declares no row at all.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void everyKeySeenMovesToLayout6(Backend backend) throws Exception {
        for (String layout : LAYOUTS) {
            for (Case c : Case.values()) {
                if (!c.in(layout)) {
                    continue;
                }
                PtfHarness.Plan plan = c.planFor(layout);
                try (PtfHarness h = restored(plan, c, layout, backend)) {
                    for (int i = 0; i < IDS; i++) {
                        h.processElement(row(plan, i));
                    }
                    assertThat(keys(h, DedupTableFunction.META_V6_STATE))
                            .as("layout %s %s: keys in layout 6", layout, c)
                            .isEqualTo(KEYS);
                    if (!layout.startsWith("6")) {
                        assertThat(keys(h, DedupTableFunction.META_V2_STATE))
                                .as("layout %s %s: keys left in layout 5", layout, c)
                                .isZero();
                        assertThat(keys(h, DedupTableFunction.PAGES_V2_STATE)).isZero();
                    }
                    if (layout.equals("1")) {
                        assertThat(keys(h, LegacyDedupTableFunction.META_STATE))
                                .as("layout 1 %s: a marker row per key", c)
                                .isEqualTo(KEYS);
                        assertThat(keys(h, LegacyDedupTableFunction.PAGES_STATE)).isZero();
                    }
                }
            }
        }
    }

    /**
     * A cleanup timer of a restored key that fires before any row has reached the task frees the
     * key's state: in layouts 4 to 6 under the config recorded beside the metadata, in layout 1
     * through the deprecated function, which reads it from the row. Layouts 2 and 3 kept their
     * retention only in the row, which the function no longer reads: their timers come back one
     * generation later until a row has brought the call's config, and free the state then.
     * Afterwards every id of the snapshot (10 s of rows, retention 30 s) is forgotten: it passes
     * again.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void aTimerBeforeAnyRowFreesTheStateOfEveryLayout(Backend backend) throws Exception {
        // rows end at t0 + 10 s; 30 s retention in 3 generations of 15 s: all expired by then
        long expired = T0 + 10_000 + 30_000 + 2 * 15_000 + 1;
        for (String layout : LAYOUTS) {
            boolean rowConfig = layout.startsWith("2") || layout.startsWith("3");
            for (Case c : new Case[] {Case.RETENTION, Case.EXACT_RETENTION}) {
                if (!c.in(layout)) {
                    continue;
                }
                PtfHarness.Plan plan = c.planFor(layout);
                try (PtfHarness h = restored(plan, c, layout, backend)) {
                    h.processWatermark(expired);
                    long left = keys(h, DedupTableFunction.META_V6_STATE);
                    long time = expired + 1; // after the watermark: Flink 2.2 drops a row at it
                    if (rowConfig) {
                        assertThat(left).as("layout %s %s: put off", layout, c).isEqualTo(KEYS);
                        GenericRowData first = (GenericRowData) row(plan, IDS + 1);
                        first.setField(plan.column("ts"), TimestampData.fromEpochMillis(time));
                        h.processElement(first); // brings the call's config
                        assertThat(returned(h)).isOne();
                        h.processWatermark(expired + 15_000);
                        time = expired + 15_001;
                        left = keys(h, DedupTableFunction.META_V6_STATE) - 1; // the new row's
                    }
                    assertThat(left).as("layout %s %s: keys left", layout, c).isZero();
                    assertThat(keys(h, DedupTableFunction.META_V2_STATE)).isZero();
                    assertThat(keys(h, DedupTableFunction.PAGES_V2_STATE)).isZero();
                    for (int i = 0; i < IDS; i++) {
                        GenericRowData r = (GenericRowData) row(plan, i);
                        r.setField(plan.column("ts"), TimestampData.fromEpochMillis(time + i));
                        h.processElement(r);
                    }
                    // 1000 ids new to an empty filter: none dropped in exact mode, at most 1%
                    // otherwise (as when the files were written); unfreed state would drop all
                    assertThat(returned(h))
                            .as("layout %s %s: every id forgotten", layout, c)
                            .isBetween(c.exact ? IDS : 990L, (long) IDS);
                }
            }
        }
    }

    /** The number of keys with a value in {@code state}, 0 if the backend has no such state. */
    private static long keys(PtfHarness h, String state) {
        try (java.util.stream.Stream<?> keys =
                h.keyedStateBackend()
                        .getKeys(state, org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return keys.count();
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains(state)) {
                throw e;
            }
            return 0;
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        for (Backend backend : Backend.values()) {
            for (Case c : Case.values()) {
                PtfHarness.Plan plan = c.plan(java.util.Map.of());
                try (PtfHarness h = harness(plan, backend)) {
                    h.open();
                    for (int i = 0; i < IDS; i++) {
                        h.processElement(row(plan, i));
                    }
                    assertThat(returned(h)).isBetween(c.exact ? IDS : 990L, (long) IDS);
                    Path file = c.file(CURRENT, backend);
                    Files.createDirectories(file.getParent());
                    OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), file.toString());
                }
            }
        }
    }
}
