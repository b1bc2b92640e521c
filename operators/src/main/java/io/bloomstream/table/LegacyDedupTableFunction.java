package io.bloomstream.table;

import io.bloomstream.table.internal.DedupArguments;
import io.bloomstream.table.internal.DedupCall;
import io.bloomstream.table.internal.SqlDedupLayout;
import io.bloomstream.table.internal.SqlDedupRun;
import io.bloomstream.table.internal.SqlDedupViews;
import java.math.BigDecimal;
import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.annotation.ArgumentHint;
import org.apache.flink.table.annotation.ArgumentTrait;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.StateHint;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.ProcessTableFunction;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.types.Row;

/**
 * {@code BLOOM_DEDUP} for state written by bloomstream 0.4 (SQL dedup layout 1, {@link
 * SqlDedupLayout#VERSION_1}), which keeps a key's metadata in a row state entry that {@link
 * DedupTableFunction} no longer declares: the same function, with the same arguments, output and
 * guarantee, that also declares the row {@value #META_STATE} and the pages {@value #PAGES_STATE} of
 * layout 1, and moves a key's state from there to the current layout when the key is first seen (a
 * row or a timer). Register it under the name the job used, restore the savepoint, and run until
 * every key with state has been seen once (in the sharded form, every shard is seen within the
 * first rows; a key never seen again keeps its old state, unread). Then take a savepoint and
 * restore it with {@link DedupTableFunction} (docs/upgrading.md, "bloomstream 0.4 SQL state"). It
 * costs what the current function saves: Flink reads the declared row on every call.
 *
 * @deprecated only to carry the state of bloomstream 0.4 to the current layout; use {@link
 *     DedupTableFunction}.
 */
@Deprecated
@PublicEvolving
@DataTypeHint("ROW<>")
public class LegacyDedupTableFunction extends ProcessTableFunction<Row> {

    private static final long serialVersionUID = 1L;

    /** Name of the per-key row state entry of layouts 1 to 5 (part of the savepoint contract). */
    public static final String META_STATE = SqlDedupLayout.META_STATE;

    /** Name of the per-key pages entry of layout 1 (part of the savepoint contract). */
    public static final String PAGES_STATE = SqlDedupLayout.PAGES_STATE;

    /** The type of {@value #META_STATE}. */
    public static final String META_TYPE = SqlDedupLayout.META_TYPE;

    private static final String META_V2_STATE = DedupTableFunction.META_V2_STATE;
    private static final String PAGES_V2_STATE = DedupTableFunction.PAGES_V2_STATE;
    private static final String EXACT_STATE = DedupTableFunction.EXACT_STATE;
    private static final String META_V6_STATE = DedupTableFunction.META_V6_STATE;
    private static final String PAGES_V6_STATE = DedupTableFunction.PAGES_V6_STATE;
    private static final String EXACT_V6_STATE = DedupTableFunction.EXACT_V6_STATE;
    private static final String PENDING_STATE = DedupTableFunction.PENDING_STATE;
    private static final String STATE_TTL = DedupTableFunction.STATE_TTL;
    private static final String NO_TTL = DedupTableFunction.NO_TTL;

    private transient SqlDedupRun run;
    private transient SqlDedupViews views;

    @Override
    public void open(FunctionContext context) throws Exception {
        run = new SqlDedupRun(context.getMetricGroup(), DedupTableFunction.clock, this::collect);
        views = new SqlDedupViews();
    }

    /** Judges one row, as {@link DedupTableFunction}, after moving the key's row state. */
    public void eval(
            Context ctx,
            @StateHint(name = META_STATE, type = @DataTypeHint(META_TYPE), ttl = STATE_TTL)
                    Row metaRow,
            @StateHint(name = PAGES_STATE, ttl = STATE_TTL) MapView<Long, long[]> pageView,
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
        moveRow(metaRow, pageView, oldMeta, oldPages);
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
            Row metaRow,
            MapView<Long, long[]> pageView,
            MapView<Integer, byte[]> oldMeta,
            MapView<Long, byte[]> oldPages,
            MapView<String, Boolean> oldExact,
            MapView<Integer, byte[]> metaView,
            MapView<Long, byte[]> pagesView,
            MapView<String, Boolean> exactView,
            MapView<Long, byte[]> pendingView)
            throws Exception {
        moveRow(metaRow, pageView, oldMeta, oldPages);
        run.onTimer(
                ctx,
                views.bind(
                        oldMeta, oldPages, oldExact, metaView, pagesView, exactView, pendingView));
        if (views.hasNoFilter()) {
            SqlDedupLayout.unmarkRow(metaRow); // the key's state is freed: its row goes too
        }
    }

    /**
     * Moves the state a key of layouts 1 to 3 keeps in its row to the entries of layout 4 (and on
     * to 6 when the run reads it), and marks the row (kept non-empty, so Flink writes it once per
     * key rather than deleting it on every call; {@link SqlDedupLayout#markRow}).
     */
    private static void moveRow(
            Row metaRow,
            MapView<Long, long[]> pageView,
            MapView<Integer, byte[]> oldMeta,
            MapView<Long, byte[]> oldPages)
            throws Exception {
        if (SqlDedupLayout.versionOf(metaRow) < SqlDedupLayout.VERSION_4) {
            SqlDedupLayout.migrate(metaRow, pageView, oldMeta, oldPages);
        }
        SqlDedupLayout.markRow(metaRow);
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return DedupTableFunction.typeInference(super.getTypeInference(typeFactory));
    }
}
