package io.bloomstream.table;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.dedup.FirstBy;
import io.bloomstream.flink.internal.OperatorUids;
import io.bloomstream.table.internal.DedupArguments;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;
import org.apache.flink.table.types.utils.DataTypeUtils;
import org.apache.flink.types.Row;

/**
 * The DataStream operator {@link BloomDedup} for a Java program that holds a {@link Table}: the
 * fast path to what {@code BLOOM_DEDUP} does in SQL. Named as Flink names its static entry points
 * onto a stream of another API ({@code AsyncDataStream}, {@code CEP}): the thing it returns, a
 * deduplicated table, and one verb.
 *
 * <pre>{@code
 * DedupConfig config = DedupConfig.builder().expectedItems(10_000_000).fpp(0.001).build();
 * Table firsts = BloomDedupTables.dedup(tableEnv, orders, "order_id", config);
 * }</pre>
 *
 * <p>The table goes through {@link StreamTableEnvironment#toDataStream(Table)}, {@link
 * BloomDedup#global} (one logical filter over all rows, sharded over the subtasks by {@link
 * DedupConfig#shards()}) and {@link StreamTableEnvironment#fromDataStream(DataStream, Schema)}. The
 * result has the same columns, in the same order, of the same types; a rowtime attribute stays the
 * rowtime, with the input's watermarks ({@code SOURCE_WATERMARK()}), so event-time windows and
 * joins still work after it. A proctime attribute comes back as a plain {@code TIMESTAMP_LTZ(3)}
 * column; a primary key is not redeclared.
 *
 * <p>The guarantee is {@link BloomDedup}'s, per id: with no retention, the first occurrence of each
 * id passes unless the filter gives a false positive (at most {@link DedupConfig#fpp()} per first
 * occurrence; none in {@link DedupConfig.Builder#exact exact} mode), and no later one passes. In
 * exact mode without retention, on ids that are neither NULL nor empty and reach the dedup in the
 * order Flink's query sees them, the result is the rows of Flink's keep-first {@code ROW_NUMBER()
 * OVER (PARTITION BY id ORDER BY proctime) = 1} (or {@code ORDER BY rowtime} under {@link
 * FirstBy#EVENT_TIME}), as an insert-only table. The id column is a STRING ({@code CHAR}, {@code
 * VARCHAR}), BYTES ({@code BINARY}, {@code VARBINARY}) or integer ({@code TINYINT} to {@code
 * BIGINT}) column, hashed as {@code BLOOM_DEDUP} hashes it. A row whose id is NULL, or an empty
 * STRING or BYTES, is not an id: it goes to the operator's rejected side output, which a table does
 * not show (it is counted in the operator's metrics; see docs/dedup.md). {@code BLOOM_DEDUP} also
 * rejects empty ids but keeps the first NULL-id row, as {@code ROW_NUMBER} does.
 *
 * <p>The dedup operator has uid and name {@value #DEFAULT_UID}; keep it to restore from a
 * savepoint, and give each dedup of a job its own through {@link #withUidPrefix}. The conversions
 * on either side hold no state.
 */
@PublicEvolving
public final class BloomDedupTables {

    /** The uid and name of the dedup operator {@link #dedup} adds. */
    public static final String DEFAULT_UID = "bloom-dedup-table";

    private BloomDedupTables() {}

    /**
     * The entry point with the dedup operator's uid and name {@code uidPrefix} instead of {@value
     * #DEFAULT_UID}.
     *
     * @throws IllegalArgumentException if {@code uidPrefix} is blank
     */
    public static Named withUidPrefix(String uidPrefix) {
        return new Named(OperatorUids.checkPrefix(uidPrefix));
    }

    /**
     * The rows of {@code table} whose id in {@code idColumn} is seen for the first time, as a table
     * with the same schema (see the class comment). Uid and name {@value #DEFAULT_UID}.
     *
     * @throws IllegalArgumentException if {@code idColumn} is not a column of {@code table} or not
     *     of a STRING, BYTES or integer type; if {@code config} judges by event time (an event-time
     *     retention or {@link FirstBy#EVENT_TIME}) and the table has no rowtime attribute; if the
     *     table is updating (not insert-only)
     */
    public static Table dedup(
            StreamTableEnvironment env, Table table, String idColumn, DedupConfig config) {
        return withUidPrefix(DEFAULT_UID).dedup(env, table, idColumn, config);
    }

    /** {@link BloomDedupTables#dedup} with the uid of {@link #withUidPrefix}. Immutable. */
    @PublicEvolving
    public static final class Named {
        private final String uidPrefix;

        private Named(String uidPrefix) {
            this.uidPrefix = uidPrefix;
        }

        /** The uid and name of the dedup operator. */
        public String uidPrefix() {
            return uidPrefix;
        }

        /** See {@link BloomDedupTables#dedup}. */
        public Table dedup(
                StreamTableEnvironment env, Table table, String idColumn, DedupConfig config) {
            Objects.requireNonNull(env, "env");
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(idColumn, "idColumn");
            Objects.requireNonNull(config, "config");
            ResolvedSchema schema = table.getResolvedSchema();
            IdSelector<Row> id = idSelector(schema, idColumn);
            String rowtime = rowtimeColumn(schema);
            if (rowtime == null
                    && ((config.hasRetention() && config.timeDomain() == TimeDomain.EVENT_TIME)
                            || config.firstBy() == FirstBy.EVENT_TIME)) {
                throw new IllegalArgumentException(
                        "config judges by event time, but the table has no rowtime attribute: "
                                + schema);
            }
            DataStream<Row> rows = toDataStream(env, table);
            DataStream<Row> firsts = BloomDedup.withUidPrefix(uidPrefix).global(rows, id, config);
            return env.fromDataStream(firsts, sameSchema(schema, rowtime));
        }

        @Override
        public String toString() {
            return "BloomDedupTables.withUidPrefix(" + uidPrefix + ")";
        }
    }

    /** The table as rows, or a clear refusal if it is updating (toDataStream's own is not). */
    private static DataStream<Row> toDataStream(StreamTableEnvironment env, Table table) {
        try {
            return env.toDataStream(table);
        } catch (TableException e) {
            String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            if (message.contains("update") || message.contains("delete")) {
                throw new IllegalArgumentException(
                        "table must be insert-only: it produces updates or deletes, which a"
                                + " dedup of rows cannot take (Flink: "
                                + e.getMessage()
                                + ")",
                        e);
            }
            throw e;
        }
    }

    /** An id selector reading column {@code name} by position, as {@code BLOOM_DEDUP} reads it. */
    static IdSelector<Row> idSelector(ResolvedSchema schema, String name) {
        List<String> names = schema.getColumnNames();
        int pos = names.indexOf(name);
        if (pos < 0) {
            throw new IllegalArgumentException(
                    "idColumn " + name + " is not a column of the table, which has " + names);
        }
        LogicalType type = schema.getColumnDataTypes().get(pos).getLogicalType();
        DedupArguments.IdKind kind = DedupArguments.idKind(type);
        if (kind == null) {
            throw new IllegalArgumentException(
                    "idColumn "
                            + name
                            + " must be a STRING, BYTES or integer column, was "
                            + type.asSummaryString());
        }
        switch (kind) {
            case STRING:
                return IdSelector.ofString(r -> (String) r.getField(pos));
            case BYTES:
                return IdSelector.ofBytes(r -> (byte[]) r.getField(pos));
            default:
                return IdSelector.ofLong(
                        r -> {
                            Object v = r.getField(pos);
                            return v == null ? null : ((Number) v).longValue();
                        });
        }
    }

    /** The name of the table's rowtime attribute, or null. */
    private static String rowtimeColumn(ResolvedSchema schema) {
        for (Column c : schema.getColumns()) {
            if (LogicalTypeChecks.isRowtimeAttribute(c.getDataType().getLogicalType())) {
                return c.getName();
            }
        }
        return null;
    }

    /**
     * The input's columns as physical columns of the same types, the rowtime declared again as the
     * rowtime with the stream's watermarks.
     */
    static Schema sameSchema(ResolvedSchema schema, String rowtime) {
        Schema.Builder b = Schema.newBuilder();
        for (Column c : schema.getColumns()) {
            DataType type = DataTypeUtils.removeTimeAttribute(c.getDataType());
            b.column(c.getName(), type);
        }
        if (rowtime != null) {
            b.watermark(rowtime, "SOURCE_WATERMARK()");
        }
        return b.build();
    }
}
