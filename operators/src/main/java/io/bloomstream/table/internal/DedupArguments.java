package io.bloomstream.table.internal;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.internal.Shards;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.functions.FunctionDefinition;
import org.apache.flink.table.functions.TableSemantics;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.ArgumentCount;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.ConstantArgumentCount;
import org.apache.flink.table.types.inference.InputTypeStrategy;
import org.apache.flink.table.types.inference.Signature;
import org.apache.flink.table.types.inference.StaticArgument;
import org.apache.flink.table.types.inference.TypeStrategy;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.utils.LogicalTypeUtils;
import org.apache.flink.types.ColumnList;

/**
 * The arguments of {@code BLOOM_DEDUP}: their positions, their checks at planning time (each
 * failure names the argument and its value) and the {@link DedupConfig} they make, the same at
 * planning time and at run time.
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
    static final int POS_ON_TIME = 9;

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
     * @throws IllegalArgumentException naming the argument and its value
     */
    public static DedupConfig config(
            Integer expectedItems,
            Integer shards,
            BigDecimal fpp,
            Duration retention,
            Duration stateTtl,
            Boolean resetTtlOnDuplicate,
            Integer generations) {
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
                DedupConfig.builder().expectedItems(perPartition).fpp(fpp.doubleValue());
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
            if (resetTtlOnDuplicate != null) {
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
            b.retention(r, TimeDomain.EVENT_TIME);
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

    private static IllegalArgumentException bad(String argument, String rule, Object value) {
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
     * Checks#checkNames}: this is the first hook that sees the names as written) and a required
     * argument that is missing, then gives {@link #outputType(CallContext)}.
     *
     * @param declared the function's declared arguments, in order
     */
    public static TypeStrategy outputTypeStrategy(List<StaticArgument> declared) {
        List<String> known = knownNames(declared);
        return call -> {
            try {
                Optional<List<String>> names =
                        FlinkCallContexts.argumentNames(call, FUNCTION, known.size());
                if (names.isPresent()) {
                    Checks.checkNames(names.get(), known);
                    Checks.required(FlinkCallContexts.asWritten(call, FUNCTION));
                }
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new ValidationException(e.getMessage(), e);
            }
            return outputType(call);
        };
    }

    /** The names of the declared arguments and of Flink's system arguments. */
    static List<String> knownNames(List<StaticArgument> declared) {
        List<String> names = new ArrayList<>();
        declared.forEach(a -> names.add(a.getName()));
        names.addAll(SYSTEM_ARGUMENTS);
        return List.copyOf(names);
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

    /**
     * The arguments Flink adds to every process table function's declared ones: {@code on_time} and
     * {@code uid} (its {@code SystemTypeInference}).
     */
    static final List<String> SYSTEM_ARGUMENTS = List.of("on_time", "uid");

    /** The planning-time checks; the types are left as they are (the static signature's). */
    public static final class Checks implements InputTypeStrategy {

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

        /**
         * Refuses an argument name the function does not have (Calcite would drop it, and the value
         * with it, before the function sees the call) and a name given twice.
         */
        static void checkNames(List<String> written, List<String> known) {
            Set<String> seen = new HashSet<>();
            for (String name : written) {
                if (!known.contains(name)) {
                    String near = nearest(name, known);
                    throw new IllegalArgumentException(
                            FUNCTION
                                    + ": unknown argument "
                                    + name
                                    + (near == null ? "" : " (did you mean " + near + "?)")
                                    + "; the arguments are "
                                    + String.join(", ", known));
                }
                if (!seen.add(name)) {
                    throw new IllegalArgumentException(
                            FUNCTION + ": argument " + name + " is given twice");
                }
            }
        }

        /** The known name at most two edits from {@code name} (Levenshtein), or null. */
        static String nearest(String name, List<String> known) {
            String best = null;
            int bestDistance = 3;
            for (String k : known) {
                int d = distance(name, k);
                if (d < bestDistance) {
                    best = k;
                    bestDistance = d;
                }
            }
            return best;
        }

        private static int distance(String a, String b) {
            int[] prev = new int[b.length() + 1];
            int[] cur = new int[b.length() + 1];
            for (int j = 0; j <= b.length(); j++) {
                prev[j] = j;
            }
            for (int i = 1; i <= a.length(); i++) {
                cur[0] = i;
                for (int j = 1; j <= b.length(); j++) {
                    int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                    cur[j] = Math.min(sub, Math.min(prev[j], cur[j - 1]) + 1);
                }
                int[] t = prev;
                prev = cur;
                cur = t;
            }
            return prev[b.length()];
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
         * Refuses a call without {@code expected_items} or {@code fpp}. Run by the output type
         * strategy after the names were checked: in the input type strategy a misspelt name has
         * already been dropped, and would be reported as a missing argument.
         */
        static void required(CallContext call) {
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

        /**
         * Checks the values of the call's arguments (a missing required one: {@link #required}).
         */
        private static void check(CallContext call) {
            List<DataType> args = call.getArgumentDataTypes();
            DataType input = args.get(POS_INPUT);
            String id = literal(call, POS_ID_COLUMN, ID_COLUMN, String.class);
            if (id == null) {
                throw bad(ID_COLUMN, "must be a column name", "NULL");
            }
            List<String> names = DataType.getFieldNames(input);
            int index = names.indexOf(id);
            if (index < 0) {
                throw bad(ID_COLUMN, "must name a column of the input " + names, "'" + id + "'");
            }
            int[] keys =
                    call.getTableSemantics(POS_INPUT)
                            .map(TableSemantics::partitionByColumns)
                            .orElse(new int[0]);
            if (contains(keys, index)) {
                throw new IllegalArgumentException(
                        FUNCTION
                                + ": the input is partitioned by its id column '"
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
            LogicalType idType = DataType.getFieldDataTypes(input).get(index).getLogicalType();
            if (idKind(idType) == null) {
                throw bad(
                        ID_COLUMN,
                        "must name a STRING, BYTES or integer column",
                        "'" + id + "' of type " + idType.asSummaryString());
            }
            // Flink 2.2 passes scalar literals of a process table function to eval() uncast, so
            // each
            // must already have the internal type of its parameter (an INT for an INT, any DECIMAL
            // for a DECIMAL, any day-time interval for a Duration).
            BigDecimal items =
                    typed(
                            call,
                            POS_EXPECTED_ITEMS,
                            EXPECTED_ITEMS,
                            LogicalTypeRoot.INTEGER,
                            "an INT");
            BigDecimal fpp = number(call, POS_FPP, FPP);
            if (items == null || fpp == null) {
                return; // refused by the output type strategy, after the names (see required)
            }
            Duration retention = interval(call, POS_RETENTION, RETENTION);
            Duration stateTtl = interval(call, POS_STATE_TTL, STATE_TTL);
            Boolean reset = bool(call, POS_RESET_TTL_ON_DUPLICATE, RESET_TTL_ON_DUPLICATE);
            BigDecimal generations =
                    typed(call, POS_GENERATIONS, GENERATIONS, LogicalTypeRoot.INTEGER, "an INT");
            BigDecimal shards = typed(call, POS_SHARDS, SHARDS, LogicalTypeRoot.INTEGER, "an INT");
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
            DedupConfig config =
                    config(
                            items.intValue(),
                            shards == null ? null : shards.intValue(),
                            fpp,
                            retention,
                            stateTtl,
                            reset,
                            generations == null ? null : generations.intValue());
            // Code generation checks the call again without the system arguments: on_time was
            // checked at validation.
            boolean systemArgs = call.getArgumentDataTypes().size() > POS_ON_TIME;
            if (config.hasRetention() && systemArgs && !hasOnTime(call)) {
                throw bad(
                        retention != null ? RETENTION : STATE_TTL,
                        "needs on_time => DESCRIPTOR(time_column): the retention is on event time"
                                + " only (Flink 2.2 gives process table functions no"
                                + " processing-time timers)",
                        retention != null ? retention : stateTtl);
            }
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
                throw bad(
                        name, "must be a BOOLEAN literal (TRUE or FALSE)", type.asSummaryString());
            }
            return literal(call, pos, name, Boolean.class);
        }

        /**
         * The fpp literal: a DECIMAL (0.01) or an integer is taken; a DOUBLE (1e-2) is refused with
         * the literal to write instead, since Flink 2.2 passes a process table function's scalar
         * literals to {@code eval()} uncast, so a DOUBLE would not arrive as the DECIMAL the
         * function declares.
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
                                + (value == null
                                        ? "0.01"
                                        : new BigDecimal(value.toString())
                                                .stripTrailingZeros()
                                                .toPlainString())
                                + " (Flink 2.2 passes "
                                + type.asSummaryString()
                                + " literals such as 1e-2 to process table functions uncast)",
                        String.valueOf(value));
            }
            if (!type.is(LogicalTypeRoot.DECIMAL)) {
                throw bad(name, "must be a DECIMAL literal like 0.01", type.asSummaryString());
            }
            return literal(call, pos, name, BigDecimal.class);
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
                            Signature.Argument.of(RESET_TTL_ON_DUPLICATE, "BOOLEAN (optional)")));
        }
    }
}
