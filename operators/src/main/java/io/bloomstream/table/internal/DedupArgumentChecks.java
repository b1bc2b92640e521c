package io.bloomstream.table.internal;

import static io.bloomstream.table.internal.DedupArguments.EXACT;
import static io.bloomstream.table.internal.DedupArguments.EXPECTED_ITEMS;
import static io.bloomstream.table.internal.DedupArguments.FIRST_BY;
import static io.bloomstream.table.internal.DedupArguments.FPP;
import static io.bloomstream.table.internal.DedupArguments.FUNCTION;
import static io.bloomstream.table.internal.DedupArguments.GENERATIONS;
import static io.bloomstream.table.internal.DedupArguments.ID_COLUMN;
import static io.bloomstream.table.internal.DedupArguments.INPUT;
import static io.bloomstream.table.internal.DedupArguments.POS_EXACT;
import static io.bloomstream.table.internal.DedupArguments.POS_EXPECTED_ITEMS;
import static io.bloomstream.table.internal.DedupArguments.POS_FIRST_BY;
import static io.bloomstream.table.internal.DedupArguments.POS_FPP;
import static io.bloomstream.table.internal.DedupArguments.POS_GENERATIONS;
import static io.bloomstream.table.internal.DedupArguments.POS_ID_COLUMN;
import static io.bloomstream.table.internal.DedupArguments.POS_INPUT;
import static io.bloomstream.table.internal.DedupArguments.POS_ON_TIME;
import static io.bloomstream.table.internal.DedupArguments.POS_RESET_TTL_ON_DUPLICATE;
import static io.bloomstream.table.internal.DedupArguments.POS_RETENTION;
import static io.bloomstream.table.internal.DedupArguments.POS_SHARDS;
import static io.bloomstream.table.internal.DedupArguments.POS_STATE_TTL;
import static io.bloomstream.table.internal.DedupArguments.RESET_TTL_ON_DUPLICATE;
import static io.bloomstream.table.internal.DedupArguments.RETENTION;
import static io.bloomstream.table.internal.DedupArguments.SHARDS;
import static io.bloomstream.table.internal.DedupArguments.STATE_TTL;
import static io.bloomstream.table.internal.DedupArguments.bad;
import static io.bloomstream.table.internal.DedupArguments.config;
import static io.bloomstream.table.internal.DedupArguments.contains;
import static io.bloomstream.table.internal.DedupArguments.firstBy;
import static io.bloomstream.table.internal.DedupArguments.idColumns;
import static io.bloomstream.table.internal.DedupArguments.idKind;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.functions.FunctionDefinition;
import org.apache.flink.table.functions.TableSemantics;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.ArgumentCount;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.ConstantArgumentCount;
import org.apache.flink.table.types.inference.InputTypeStrategy;
import org.apache.flink.table.types.inference.Signature;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.types.ColumnList;

/**
 * The planning-time checks of {@code BLOOM_DEDUP}'s arguments ({@link DedupArguments}); the types
 * are left as they are (the static signature's).
 */
@Internal
public final class DedupArgumentChecks implements InputTypeStrategy {

    @Override
    public ArgumentCount getArgumentCount() {
        return ConstantArgumentCount.any();
    }

    @Override
    public Optional<List<DataType>> inferInputTypes(CallContext call, boolean throwOnFailure) {
        try {
            check(FlinkCallContexts.asWritten(call, FUNCTION));
        } catch (IllegalArgumentException | IllegalStateException e) {
            return call.fail(throwOnFailure, "%s", e.getMessage());
        }
        return Optional.of(call.getArgumentDataTypes());
    }

    /** The PARTITION BY columns, as written: {@code (a, b)}. */
    private static String partitionBy(List<String> names, int[] keys) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < keys.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(names.get(keys[i]));
        }
        return sb.append(')').toString();
    }

    /**
     * Refuses a call without {@code id_column}, {@code expected_items} or {@code fpp}. Run by the
     * output type strategy after the names were checked: in the input type strategy a misspelt name
     * has already been dropped, and would be reported as a missing argument. The three are declared
     * optional for this reason: Calcite refuses a missing required argument before the function
     * sees the call ("DEFAULT is only allowed for optional parameters", naming none).
     */
    static void required(CallContext call) {
        if (call.isArgumentNull(POS_ID_COLUMN)) {
            throw bad(
                    ID_COLUMN,
                    "is required: the name of the input's id column, like "
                            + ID_COLUMN
                            + " => 'event_id'",
                    "missing or NULL");
        }
        if (call.isArgumentNull(POS_EXPECTED_ITEMS)) {
            throw bad(
                    EXPECTED_ITEMS,
                    "is required: the distinct ids of one partition key (of the whole"
                            + " input with shards or without PARTITION BY), like "
                            + EXPECTED_ITEMS
                            + " => 1000000",
                    "missing or NULL");
        }
        if (call.isArgumentNull(POS_FPP)) {
            throw bad(
                    FPP,
                    "is required: the false-positive rate, in (0, 1), like " + FPP + " => 0.01",
                    "missing or NULL");
        }
    }

    /** Checks the values of the call's arguments (a missing required one: {@link #required}). */
    private static void check(CallContext call) {
        List<DataType> args = call.getArgumentDataTypes();
        DataType input = args.get(POS_INPUT);
        String id = literal(call, POS_ID_COLUMN, ID_COLUMN, String.class);
        if (id == null) {
            return; // refused by the output type strategy, after the names (see required)
        }
        List<String> names = DataType.getFieldNames(input);
        int[] ids = idColumns(id, names);
        int[] keys =
                call.getTableSemantics(POS_INPUT)
                        .map(TableSemantics::partitionByColumns)
                        .orElse(new int[0]);
        if (containsAll(keys, ids)) {
            throw new IllegalArgumentException(
                    FUNCTION
                            + ": the input is partitioned by its id column"
                            + (ids.length > 1 ? "s '" : " '")
                            + id
                            + "' (PARTITION BY "
                            + partitionBy(names, keys)
                            + "), which keeps a filter for each id: more state than the exact"
                            + " ROW_NUMBER dedup it replaces. Partition by a shard of the id,"
                            + " computed in a view: CREATE TEMPORARY VIEW sharded AS SELECT *,"
                            + " BLOOM_SHARD("
                            + id
                            + ") AS shard FROM ...; then input => TABLE sharded PARTITION BY"
                            + " shard (parallel); or call it without PARTITION BY (the whole"
                            + " input on one task)");
        }
        for (int index : ids) {
            LogicalType idType = DataType.getFieldDataTypes(input).get(index).getLogicalType();
            if (idKind(idType) == null) {
                throw bad(
                        ID_COLUMN,
                        "must name STRING, BYTES or integer columns",
                        "'" + names.get(index) + "' of type " + idType.asSummaryString());
            }
        }
        // Flink 2.2 passes scalar literals of a process table function to eval() uncast, so
        // each
        // must already have the internal type of its parameter (an INT for an INT, any DECIMAL
        // for a DECIMAL, any day-time interval for a Duration).
        BigDecimal items =
                typed(call, POS_EXPECTED_ITEMS, EXPECTED_ITEMS, LogicalTypeRoot.INTEGER, "an INT");
        BigDecimal fpp = number(call, POS_FPP, FPP);
        if (items == null || fpp == null) {
            return; // refused by the output type strategy, after the names (see required)
        }
        Duration retention = interval(call, POS_RETENTION, RETENTION);
        Duration stateTtl = interval(call, POS_STATE_TTL, STATE_TTL);
        Boolean reset = bool(call, POS_RESET_TTL_ON_DUPLICATE, RESET_TTL_ON_DUPLICATE);
        Boolean exact = bool(call, POS_EXACT, EXACT);
        BigDecimal generations =
                typed(call, POS_GENERATIONS, GENERATIONS, LogicalTypeRoot.INTEGER, "an INT");
        BigDecimal shards = typed(call, POS_SHARDS, SHARDS, LogicalTypeRoot.INTEGER, "an INT");
        String firstBy = literal(call, POS_FIRST_BY, FIRST_BY, String.class);
        // Code generation checks the call again without the system arguments: on_time was
        // checked at validation, and what depends on it is not checked again.
        boolean systemArgs = call.getArgumentDataTypes().size() > POS_ON_TIME;
        boolean onTime = !systemArgs || hasOnTime(call);
        firstBy(firstBy, onTime);
        if (shards != null && keys.length == 0) {
            throw bad(
                    SHARDS,
                    "needs PARTITION BY a column of BLOOM_SHARD("
                            + id
                            + ", "
                            + shards
                            + "): without PARTITION BY the whole input is one partition and"
                            + " expected_items counts its ids",
                    shards);
        }
        config(
                items.intValue(),
                shards == null ? null : shards.intValue(),
                fpp,
                retention,
                stateTtl,
                reset,
                generations == null ? null : generations.intValue(),
                exact,
                onTime);
    }

    /** Whether {@code keys} holds every one of {@code ids}. */
    private static boolean containsAll(int[] keys, int[] ids) {
        for (int id : ids) {
            if (!contains(keys, id)) {
                return false;
            }
        }
        return true;
    }

    private static boolean hasOnTime(CallContext call) {
        return !call.isArgumentNull(POS_ON_TIME)
                && call.getArgumentValue(POS_ON_TIME, ColumnList.class)
                        .map(c -> !c.getNames().isEmpty())
                        .orElse(false);
    }

    /** A literal argument's value, or null if the argument is absent or NULL. */
    private static <T> T literal(CallContext call, int pos, String name, Class<T> type) {
        if (call.isArgumentNull(pos)) {
            return null;
        }
        if (!call.isArgumentLiteral(pos)) {
            throw bad(name, "must be a literal", "an expression");
        }
        return call.getArgumentValue(pos, type)
                .orElseThrow(
                        () ->
                                bad(
                                        name,
                                        "has the wrong type",
                                        call.getArgumentDataTypes().get(pos)));
    }

    private static Duration interval(CallContext call, int pos, String name) {
        if (call.isArgumentNull(pos)) {
            return null;
        }
        LogicalType type = call.getArgumentDataTypes().get(pos).getLogicalType();
        if (!type.is(LogicalTypeRoot.INTERVAL_DAY_TIME)) {
            throw bad(
                    name,
                    "must be a day-time INTERVAL literal like INTERVAL '1' DAY",
                    type.asSummaryString());
        }
        return literal(call, pos, name, Duration.class);
    }

    /** A BOOLEAN literal, or null if absent or NULL. */
    private static Boolean bool(CallContext call, int pos, String name) {
        if (call.isArgumentNull(pos)) {
            return null;
        }
        LogicalType type = call.getArgumentDataTypes().get(pos).getLogicalType();
        if (!type.is(LogicalTypeRoot.BOOLEAN)) {
            throw bad(name, "must be a BOOLEAN literal (TRUE or FALSE)", type.asSummaryString());
        }
        return literal(call, pos, name, Boolean.class);
    }

    /**
     * The fpp literal: a DECIMAL (0.01) or an integer is taken; a DOUBLE (1e-2) is refused with the
     * literal to write instead, since Flink 2.2 passes a process table function's scalar literals
     * to {@code eval()} uncast, so a DOUBLE would not arrive as the DECIMAL the function declares.
     */
    private static BigDecimal number(CallContext call, int pos, String name) {
        if (call.isArgumentNull(pos)) {
            return null;
        }
        LogicalType type = call.getArgumentDataTypes().get(pos).getLogicalType();
        if (type.is(LogicalTypeFamily.APPROXIMATE_NUMERIC)) {
            Double value = literal(call, pos, name, Double.class);
            throw bad(
                    name,
                    "must be a DECIMAL literal: write "
                            + (value == null ? "0.01" : decimal(value))
                            + " (Flink 2.2 passes a process table function's "
                            + type.copy(true).asSummaryString()
                            + " literals to it uncast)",
                    value == null
                            ? "NULL"
                            : "the " + type.copy(true).asSummaryString() + " " + scientific(value));
        }
        if (!type.is(LogicalTypeRoot.DECIMAL)) {
            throw bad(name, "must be a DECIMAL literal like 0.01", type.asSummaryString());
        }
        return literal(call, pos, name, BigDecimal.class);
    }

    /** {@code value} as a DECIMAL literal: 0.01 for 1e-2. */
    static String decimal(double value) {
        return new BigDecimal(Double.toString(value)).stripTrailingZeros().toPlainString();
    }

    /**
     * {@code value} in scientific notation, as a DOUBLE literal is written: 1E-2 for 1e-2, 1.5E0
     * for 1.5e0. The literal's own text is gone by the time the function sees the call, and the
     * plain form (0.01) would read as the DECIMAL literal the message asks for.
     */
    static String scientific(double value) {
        BigDecimal d = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        String digits = d.unscaledValue().abs().toString();
        int exponent = digits.length() - 1 - d.scale();
        return (d.signum() < 0 ? "-" : "")
                + digits.charAt(0)
                + (digits.length() > 1 ? "." + digits.substring(1) : "")
                + "E"
                + exponent;
    }

    /** A numeric literal of the given type root, or null if absent or NULL. */
    private static BigDecimal typed(
            CallContext call, int pos, String name, LogicalTypeRoot root, String what) {
        if (call.isArgumentNull(pos)) {
            return null;
        }
        LogicalType type = call.getArgumentDataTypes().get(pos).getLogicalType();
        if (!type.is(root)) {
            throw bad(name, "must be " + what + " literal", type.asSummaryString());
        }
        return literal(call, pos, name, BigDecimal.class);
    }

    @Override
    public List<Signature> getExpectedSignatures(FunctionDefinition definition) {
        return List.of(
                Signature.of(
                        Signature.Argument.of(INPUT, "TABLE [PARTITION BY key]"),
                        Signature.Argument.of(ID_COLUMN, "STRING"),
                        Signature.Argument.of(EXPECTED_ITEMS, "BIGINT"),
                        Signature.Argument.of(FPP, "DOUBLE"),
                        Signature.Argument.of(RETENTION, "INTERVAL (optional)"),
                        Signature.Argument.of(GENERATIONS, "INT (optional)"),
                        Signature.Argument.of(SHARDS, "INT (optional)"),
                        Signature.Argument.of(STATE_TTL, "INTERVAL (optional)"),
                        Signature.Argument.of(RESET_TTL_ON_DUPLICATE, "BOOLEAN (optional)"),
                        Signature.Argument.of(EXACT, "BOOLEAN (optional)"),
                        Signature.Argument.of(FIRST_BY, "STRING (optional)")));
    }
}
