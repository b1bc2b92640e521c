package io.bloomstream.table.internal;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.internal.Shards;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.functions.TableSemantics;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.StaticArgument;
import org.apache.flink.table.types.inference.TypeStrategy;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.utils.LogicalTypeUtils;

/**
 * The arguments of {@code BLOOM_DEDUP}: their names and positions, the {@link DedupConfig} they
 * make (the same at planning time and at run time; each failure names the argument and its value),
 * and the output type. The checks of the literals at planning time: {@link DedupArgumentChecks}; of
 * the names as written: {@link PtfArgumentNames}.
 */
@Internal
public final class DedupArguments {

    static final String FUNCTION = "BLOOM_DEDUP";
    public static final String INPUT = "input";
    public static final String ID_COLUMN = "id_column";
    public static final String EXPECTED_ITEMS = "expected_items";
    public static final String FPP = "fpp";
    public static final String RETENTION = "retention";
    public static final String GENERATIONS = "generations";
    public static final String SHARDS = "shards";
    public static final String STATE_TTL = "state_ttl";
    public static final String RESET_TTL_ON_DUPLICATE = "reset_ttl_on_duplicate";
    public static final String EXACT = "exact";
    public static final String FIRST_BY = "first_by";

    /**
     * The type of interval arguments: the type Flink gives every day-time interval literal, so that
     * no cast is needed (Flink 2.2 cannot plan a cast of an interval argument).
     */
    public static final String INTERVAL_TYPE = "INTERVAL SECOND(3)";

    // Positions in the call: the declared arguments, then the system arguments on_time and uid.
    static final int POS_INPUT = 0;
    static final int POS_ID_COLUMN = 1;
    static final int POS_EXPECTED_ITEMS = 2;
    static final int POS_FPP = 3;
    static final int POS_RETENTION = 4;
    static final int POS_GENERATIONS = 5;
    static final int POS_SHARDS = 6;
    static final int POS_STATE_TTL = 7;
    static final int POS_RESET_TTL_ON_DUPLICATE = 8;
    static final int POS_EXACT = 9;
    static final int POS_FIRST_BY = 10;
    static final int POS_ON_TIME = 11;

    private DedupArguments() {}

    /**
     * The config of a call; the Java names of the builder in its messages are replaced by the SQL
     * argument names. Its expected items are those of one partition key: {@code expectedItems}
     * itself without {@code shards}, else each shard's share of the whole input's {@code
     * expectedItems} ({@link Shards#itemsPerShard}: the mean plus four standard deviations).
     *
     * <p>The retention is {@code retention} or, under Flink's name, {@code stateTtl} (not both); a
     * {@code stateTtl} of zero is no retention, as in Flink's {@code DEDUPLICATE_KEEP_FIRST}.
     * {@code resetTtlOnDuplicate} needs a retention, and is by default true under {@code state_ttl}
     * (Flink's default) and false under {@code retention} (bloomstream 0.5's meaning).
     *
     * @param expectedItems {@code expected_items}, required
     * @param shards {@code shards}: the BLOOM_SHARD partitions the whole input's ids fall into, or
     *     null
     * @param fpp {@code fpp}, required
     * @param retention {@code retention}, or null
     * @param stateTtl {@code state_ttl}, or null
     * @param resetTtlOnDuplicate {@code reset_ttl_on_duplicate}, or null for its default
     * @param generations {@code generations}, or null
     * @param exact {@code exact}: exact mode ({@link DedupConfig.Builder#exact}), or null for false
     * @param onTime whether the call names an event-time column ({@code on_time}): a retention is
     *     then on event time, else on processing time
     * @throws IllegalArgumentException naming the argument and its value
     */
    public static DedupConfig config(
            Integer expectedItems,
            Integer shards,
            BigDecimal fpp,
            Duration retention,
            Duration stateTtl,
            Boolean resetTtlOnDuplicate,
            Integer generations,
            Boolean exact,
            boolean onTime) {
        if (expectedItems == null || expectedItems < 1) {
            throw bad(EXPECTED_ITEMS, "must be a positive INT", expectedItems);
        }
        if (shards != null && shards < 1) {
            throw bad(SHARDS, "must be a positive INT (as BLOOM_SHARD's)", shards);
        }
        long perPartition =
                shards == null ? expectedItems : Shards.itemsPerShard(expectedItems, shards);
        if (fpp == null || !(fpp.doubleValue() > 0 && fpp.doubleValue() < 1)) {
            throw bad(FPP, "must be in (0, 1)", fpp);
        }
        DedupConfig.Builder b =
                DedupConfig.builder()
                        .expectedItems(perPartition)
                        .fpp(fpp.doubleValue())
                        .exact(Boolean.TRUE.equals(exact));
        if (retention != null && stateTtl != null) {
            throw new IllegalArgumentException(
                    FUNCTION
                            + ": arguments "
                            + RETENTION
                            + " and "
                            + STATE_TTL
                            + " both name the retention; give one, was "
                            + RETENTION
                            + " => "
                            + retention
                            + ", "
                            + STATE_TTL
                            + " => "
                            + stateTtl);
        }
        String name = stateTtl != null ? STATE_TTL : RETENTION;
        if (stateTtl != null && stateTtl.isNegative()) {
            throw bad(STATE_TTL, "must not be negative (zero: no retention)", stateTtl);
        }
        Duration r = stateTtl != null ? (stateTtl.isZero() ? null : stateTtl) : retention;
        if (r == null) {
            if (generations != null) {
                throw bad(GENERATIONS, "needs a retention (state_ttl or retention)", generations);
            }
            if (resetTtlOnDuplicate != null && stateTtl == null) {
                // Under state_ttl, zero, it means nothing, as in Flink; beside retention it is
                // a mistake.
                throw bad(
                        RESET_TTL_ON_DUPLICATE,
                        "needs a retention (state_ttl or retention): without one every id is"
                                + " remembered for ever",
                        resetTtlOnDuplicate);
            }
            return b.build();
        }
        if (r.isNegative() || r.toMillis() < 1) {
            throw bad(name, "must be a positive interval of at least 1 ms", r);
        }
        try {
            b.retention(r, onTime ? TimeDomain.EVENT_TIME : TimeDomain.PROCESSING_TIME);
        } catch (IllegalArgumentException e) {
            throw bad(name, "must be from 1 ms to 100 years", r);
        }
        if (generations != null) {
            try {
                b.generations(generations);
            } catch (IllegalArgumentException e) {
                throw bad(GENERATIONS, e.getMessage().replace("generations ", ""), generations);
            }
        }
        b.resetRetentionOnDuplicate(
                resetTtlOnDuplicate != null ? resetTtlOnDuplicate : stateTtl != null);
        return b.build(); // generations and retention alone always fit (checked by the builder)
    }

    /**
     * Which row of an id is its first ({@value #FIRST_BY}): the earliest in event time, emitted
     * when the watermark passes it (Flink's keep-first by a rowtime), or the first to arrive,
     * emitted at once.
     */
    public enum FirstBy {
        EVENT_TIME,
        ARRIVAL
    }

    /**
     * The {@value #FIRST_BY} of a call: {@code firstBy} ('EVENT_TIME' or 'ARRIVAL', in any case),
     * or by default EVENT_TIME with {@code on_time} and ARRIVAL without.
     *
     * @throws IllegalArgumentException for another value, or EVENT_TIME without {@code on_time}
     */
    public static FirstBy firstBy(String firstBy, boolean onTime) {
        if (firstBy == null) {
            return onTime ? FirstBy.EVENT_TIME : FirstBy.ARRIVAL;
        }
        FirstBy f;
        try {
            f = FirstBy.valueOf(firstBy.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad(FIRST_BY, "must be 'EVENT_TIME' or 'ARRIVAL'", "'" + firstBy + "'");
        }
        if (f == FirstBy.EVENT_TIME && !onTime) {
            throw bad(
                    FIRST_BY,
                    "'EVENT_TIME' needs on_time => DESCRIPTOR(time_column); without it the first"
                            + " row to arrive is the first",
                    "'" + firstBy + "'");
        }
        return f;
    }

    /**
     * The positions of the id columns {@code idColumn} names in {@code names}: one column, or
     * several separated by commas ({@code 'region, user_name'}); a name that is itself a column (a
     * comma in a quoted name) is that one column.
     *
     * @throws IllegalArgumentException naming a column that is not in {@code names}, or given twice
     */
    public static int[] idColumns(String idColumn, List<String> names) {
        int whole = names.indexOf(idColumn);
        if (whole >= 0) {
            return new int[] {whole};
        }
        String[] parts = idColumn.split(",", -1);
        int[] columns = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String name = parts[i].trim();
            columns[i] = names.indexOf(name);
            if (columns[i] < 0) {
                throw bad(
                        ID_COLUMN,
                        "must name a column of the input "
                                + names
                                + (parts.length > 1
                                        ? ", or several separated by commas; '" + name + "' is not"
                                        : ""),
                        "'" + idColumn + "'");
            }
            for (int j = 0; j < i; j++) {
                if (columns[j] == columns[i]) {
                    throw bad(ID_COLUMN, "names column '" + name + "' twice", "'" + idColumn + "'");
                }
            }
        }
        return columns;
    }

    static IllegalArgumentException bad(String argument, String rule, Object value) {
        return new IllegalArgumentException(
                FUNCTION + ": argument " + argument + " " + rule + ", was " + value);
    }

    /** The logical type of an id column, or null if ids cannot be of that type. */
    public static IdKind idKind(LogicalType type) {
        if (type.is(LogicalTypeFamily.CHARACTER_STRING)) {
            return IdKind.STRING;
        } else if (type.is(LogicalTypeFamily.BINARY_STRING)) {
            return IdKind.BYTES;
        } else if (type.is(LogicalTypeFamily.INTEGER_NUMERIC)) {
            return IdKind.INTEGER;
        }
        return null;
    }

    /** How an id column is hashed: as the DataStream operator's {@code IdSelector}s do. */
    public enum IdKind {
        STRING,
        BYTES,
        INTEGER
    }

    /**
     * The output type strategy: refuses an argument name the function does not know (see {@link
     * PtfArgumentNames}: this is the first hook that sees the names as written) and a required
     * argument that is missing, then gives {@link #outputType(CallContext)}.
     *
     * @param declared the function's declared arguments, in order
     */
    public static TypeStrategy outputTypeStrategy(List<StaticArgument> declared) {
        List<String> known = PtfArgumentNames.known(declared);
        return call -> {
            try {
                Optional<List<String>> names =
                        FlinkCallContexts.argumentNames(call, FUNCTION, known.size());
                if (names.isPresent()) {
                    PtfArgumentNames.check(FUNCTION, names.get(), known);
                    DedupArgumentChecks.required(FlinkCallContexts.asWritten(call, FUNCTION));
                }
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new ValidationException(e.getMessage(), e);
            }
            return outputType(call);
        };
    }

    /**
     * The function's own output columns: every column of the input but the PARTITION BY columns
     * (which the framework puts first), with time attributes made plain timestamps (the framework
     * appends {@code rowtime} when {@code on_time} is given).
     */
    public static Optional<DataType> outputType(CallContext call) {
        DataType input = call.getArgumentDataTypes().get(POS_INPUT);
        int[] keys =
                call.getTableSemantics(POS_INPUT)
                        .map(TableSemantics::partitionByColumns)
                        .orElse(new int[0]);
        List<String> names = DataType.getFieldNames(input);
        List<DataType> types = DataType.getFieldDataTypes(input);
        List<DataTypes.Field> fields = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (!contains(keys, i)) {
                LogicalType plain =
                        LogicalTypeUtils.removeTimeAttributes(types.get(i).getLogicalType());
                fields.add(DataTypes.FIELD(names.get(i), DataTypes.of(plain)));
            }
        }
        return Optional.of(DataTypes.ROW(fields).notNull());
    }

    public static boolean contains(int[] values, int value) {
        for (int v : values) {
            if (v == value) {
                return true;
            }
        }
        return false;
    }
}
