package io.bloomstream.table.internal;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.FilterSizing;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.functions.FunctionDefinition;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.ArgumentCount;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.ConstantArgumentCount;
import org.apache.flink.table.types.inference.InputTypeStrategy;
import org.apache.flink.table.types.inference.Signature;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * The arguments of the bloomstream SQL functions: their accepted types, the checks of literal
 * values at planning time, the same checks at run time for values that are not literals, how values
 * are hashed, and the filter shape for (expected_items, fpp).
 */
@Internal
public final class SqlArguments {

    /** What an argument is. */
    public enum Kind {
        /** An item: STRING (hashed as UTF-8), an integer (as 8 little-endian bytes) or BYTES. */
        VALUE("STRING | BIGINT | BYTES"),
        /** A positive integer literal. */
        EXPECTED_ITEMS("BIGINT"),
        /** A number in (0, 1). */
        FPP("DOUBLE"),
        /** A filter in the library's binary format. */
        FILTER("BYTES"),
        /** A filter in the binary format, or the path of a filter file. */
        FILTER_OR_PATH("BYTES | STRING"),
        /** The string literal {@code 'retract'}: the counting form of an aggregate. */
        MODE("'retract'");

        private final String signature;

        Kind(String signature) {
            this.signature = signature;
        }
    }

    /** One argument: its SQL name and kind. */
    public record Arg(String name, Kind kind) {}

    private SqlArguments() {}

    /**
     * The filter shape for {@code expectedItems} at {@code fpp}, with the default hasher and the
     * DataStream operators' automatic page size for state ({@link FilterSizing#statePageBits}).
     *
     * @throws IllegalArgumentException naming the argument that is out of range
     */
    public static FilterSpec spec(String function, long expectedItems, double fpp) {
        checkExpectedItems(function, expectedItems);
        checkFpp(function, fpp);
        try {
            int page = FilterSizing.statePageBits(expectedItems, fpp);
            return FilterSpec.builder()
                    .expectedItems(expectedItems)
                    .fpp(fpp)
                    .pageBits(page)
                    .hasher(Hasher.defaultHasher())
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    function
                            + ": no filter for expected_items="
                            + expectedItems
                            + " at fpp="
                            + fpp
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    static void checkExpectedItems(String function, long expectedItems) {
        if (expectedItems <= 0) {
            throw new IllegalArgumentException(
                    function + ": expected_items must be positive, was " + expectedItems);
        }
    }

    static void checkFpp(String function, double fpp) {
        if (!(fpp > 0 && fpp < 1)) {
            throw new IllegalArgumentException(function + ": fpp must be in (0, 1), was " + fpp);
        }
    }

    /** The shape of (expectedItems, fpp), remembered for the next row with the same values. */
    public static final class SpecCache {
        private final String function;
        private long items;
        private double fpp = Double.NaN;
        private FilterSpec spec;

        public SpecCache(String function) {
            this.function = function;
        }

        public FilterSpec get(Long expectedItems, Double fpp) {
            if (expectedItems == null || fpp == null) {
                throw new IllegalArgumentException(
                        function
                                + ": "
                                + (expectedItems == null ? "expected_items" : "fpp")
                                + " must not be NULL");
            }
            if (spec == null || items != expectedItems || this.fpp != fpp) {
                spec = spec(function, expectedItems, fpp);
                items = expectedItems;
                this.fpp = fpp;
            }
            return spec;
        }
    }

    /**
     * The hash of a value as the input strategy types it: {@link String} (UTF-8), {@link Long} (8
     * little-endian bytes) or {@code byte[]}.
     */
    public static Hash128 hash(Hasher hasher, Object value) {
        if (value instanceof String s) {
            return hasher.hash(s);
        }
        if (value instanceof Long l) {
            return hasher.hash(l.longValue());
        }
        if (value instanceof byte[] b) {
            return hasher.hash(b);
        }
        throw new IllegalArgumentException(
                "value must be a STRING, an integer or BYTES, was "
                        + (value == null ? "null" : value.getClass().getName()));
    }

    /**
     * An input type strategy for {@code args}, the first {@code required} of them required: accepts
     * the types of each kind (casting integers to BIGINT, numbers to DOUBLE, strings to STRING,
     * binaries to BYTES) and checks literal values, so a bad argument fails at planning time with a
     * message naming it.
     */
    public static InputTypeStrategy strategy(String function, int required, Arg... args) {
        return new Strategy(function, required, List.of(args));
    }

    private static final class Strategy implements InputTypeStrategy {
        private final String function;
        private final int required;
        private final List<Arg> args;

        Strategy(String function, int required, List<Arg> args) {
            this.function = function;
            this.required = required;
            this.args = args;
        }

        @Override
        public ArgumentCount getArgumentCount() {
            return ConstantArgumentCount.between(required, args.size());
        }

        @Override
        public Optional<List<DataType>> inferInputTypes(CallContext ctx, boolean throwOnFailure) {
            List<DataType> given = ctx.getArgumentDataTypes();
            List<DataType> out = new ArrayList<>(given.size());
            for (int i = 0; i < given.size(); i++) {
                Arg arg = args.get(i);
                LogicalType t = given.get(i).getLogicalType();
                DataType type = typeOf(arg.kind(), t);
                if (type == null) {
                    return ctx.fail(
                            throwOnFailure,
                            "%s: argument '%s' must be %s, was %s",
                            function,
                            arg.name(),
                            describe(arg.kind()),
                            t.asSummaryString());
                }
                String problem = checkLiteral(ctx, i, arg, t);
                if (problem != null) {
                    return ctx.fail(throwOnFailure, "%s", problem);
                }
                out.add(type);
            }
            String problem = checkShape(ctx);
            if (problem != null) {
                return ctx.fail(throwOnFailure, "%s", problem);
            }
            return Optional.of(out);
        }

        /** With literal expected_items and fpp, whether a filter of that shape can exist. */
        private String checkShape(CallContext ctx) {
            int n = -1;
            int p = -1;
            for (int i = 0; i < ctx.getArgumentDataTypes().size(); i++) {
                if (args.get(i).kind() == Kind.EXPECTED_ITEMS) {
                    n = i;
                } else if (args.get(i).kind() == Kind.FPP) {
                    p = i;
                }
            }
            if (n < 0 || p < 0) {
                return null;
            }
            Optional<BigDecimal> items = literal(ctx, n);
            Optional<BigDecimal> fpp = literal(ctx, p);
            if (items.isEmpty() || fpp.isEmpty()) {
                return null;
            }
            try {
                spec(function, items.get().longValueExact(), fpp.get().doubleValue());
                return null;
            } catch (IllegalArgumentException | ArithmeticException e) {
                return e.getMessage();
            }
        }

        private String checkLiteral(CallContext ctx, int i, Arg arg, LogicalType t) {
            if (arg.kind() == Kind.FILTER_OR_PATH) {
                return checkPathIsLiteral(ctx, i, arg, t);
            }
            if (arg.kind() == Kind.MODE) {
                return checkMode(ctx, i, arg);
            }
            if (arg.kind() != Kind.EXPECTED_ITEMS && arg.kind() != Kind.FPP) {
                return null;
            }
            if (t.is(LogicalTypeRoot.NULL) || isNullLiteral(ctx, i)) {
                return function + ": argument '" + arg.name() + "' must not be NULL";
            }
            Optional<BigDecimal> v = literal(ctx, i);
            if (v.isEmpty()) {
                return null; // not a literal: checked on each row at run time
            }
            BigDecimal value = v.get();
            try {
                if (arg.kind() == Kind.EXPECTED_ITEMS) {
                    checkExpectedItems(function, value.longValueExact());
                } else {
                    checkFpp(function, value.doubleValue());
                }
                return null;
            } catch (ArithmeticException e) {
                return function
                        + ": argument '"
                        + arg.name()
                        + "' must be a positive BIGINT, was "
                        + value.toPlainString();
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }

        /**
         * A path must be a literal: the TaskManagers open it with their credentials, so a path from
         * row data would let the rows choose which files they read (and each spelling would be
         * another file to load). A filter from a column comes as BYTES.
         */
        private String checkPathIsLiteral(CallContext ctx, int i, Arg arg, LogicalType t) {
            if (!t.is(LogicalTypeFamily.CHARACTER_STRING) || isLiteralOrUnknown(ctx, i)) {
                return null;
            }
            return function
                    + ": argument '"
                    + arg.name()
                    + "', a path, must be a string literal (the file is chosen when the query is"
                    + " planned, never by a row); a filter held in a column is passed as BYTES";
        }

        /**
         * The mode must be the literal {@code 'retract'}: it chooses the accumulator's layout for
         * the whole query, so a row cannot choose it.
         */
        private String checkMode(CallContext ctx, int i, Arg arg) {
            String problem =
                    function
                            + ": argument '"
                            + arg.name()
                            + "' must be the literal '"
                            + MODE_RETRACT
                            + "' (the counting form, for updating input)";
            try {
                if (!ctx.isArgumentLiteral(i)) {
                    return problem;
                }
                if (ctx.isArgumentNull(i)) {
                    return problem;
                }
                Optional<String> v = ctx.getArgumentValue(i, String.class);
                return v.isPresent() && isRetract(v.get()) ? null : problem;
            } catch (UnsupportedOperationException e) {
                return null; // checked while the call was validated
            }
        }

        @Override
        public List<Signature> getExpectedSignatures(FunctionDefinition definition) {
            List<Signature> signatures = new ArrayList<>();
            for (int n = required; n <= args.size(); n++) {
                List<Signature.Argument> sig = new ArrayList<>();
                for (Arg a : args.subList(0, n)) {
                    sig.add(Signature.Argument.of(a.name(), a.kind().signature));
                }
                signatures.add(Signature.of(sig));
            }
            return signatures;
        }
    }

    /** The value of a {@link Kind#MODE} argument: {@value}. */
    public static final String MODE_RETRACT = "retract";

    /** Whether {@code mode} is {@value #MODE_RETRACT} (any case, surrounding blanks ignored). */
    public static boolean isRetract(String mode) {
        return mode != null && mode.trim().equalsIgnoreCase(MODE_RETRACT);
    }

    /** The type an argument of {@code kind} given as {@code t} is cast to, or null if refused. */
    static DataType typeOf(Kind kind, LogicalType t) {
        boolean isNull = t.is(LogicalTypeRoot.NULL);
        boolean string = t.is(LogicalTypeFamily.CHARACTER_STRING);
        boolean binary = t.is(LogicalTypeFamily.BINARY_STRING);
        boolean integer = t.is(LogicalTypeFamily.INTEGER_NUMERIC);
        switch (kind) {
            case VALUE:
                if (string || isNull) {
                    return DataTypes.STRING();
                }
                if (integer) {
                    return DataTypes.BIGINT();
                }
                return binary ? DataTypes.BYTES() : null;
            case EXPECTED_ITEMS:
                return integer || isNull ? DataTypes.BIGINT() : null;
            case FPP:
                return t.is(LogicalTypeFamily.NUMERIC) || isNull ? DataTypes.DOUBLE() : null;
            case FILTER:
                return binary || isNull ? DataTypes.BYTES() : null;
            case FILTER_OR_PATH:
                if (string) {
                    return DataTypes.STRING();
                }
                return binary || isNull ? DataTypes.BYTES() : null;
            case MODE:
                return string || isNull ? DataTypes.STRING() : null;
            default:
                throw new AssertionError(kind);
        }
    }

    private static String describe(Kind kind) {
        switch (kind) {
            case VALUE:
                return "a STRING, an integer (TINYINT to BIGINT) or BYTES";
            case EXPECTED_ITEMS:
                return "an integer (TINYINT to BIGINT)";
            case FPP:
                return "a number in (0, 1)";
            case FILTER:
                return "BYTES (a filter from BLOOM_BUILD or BLOOM_UNION)";
            case FILTER_OR_PATH:
                return "BYTES (a filter) or a STRING (the path of a filter file)";
            case MODE:
                return "the string literal '" + MODE_RETRACT + "'";
            default:
                throw new AssertionError(kind);
        }
    }

    /**
     * Whether argument {@code i} is a NULL literal. The planner answers only while it validates the
     * call; when it derives an aggregate's operator the operands are gone (not literals).
     */
    private static boolean isNullLiteral(CallContext ctx, int i) {
        try {
            return ctx.isArgumentLiteral(i) && ctx.isArgumentNull(i);
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * Whether argument {@code i} is a literal; true when the planner no longer knows (see {@link
     * #isNullLiteral}): it was checked while the call was validated.
     */
    private static boolean isLiteralOrUnknown(CallContext ctx, int i) {
        try {
            return ctx.isArgumentLiteral(i);
        } catch (UnsupportedOperationException e) {
            return true;
        }
    }

    /**
     * A literal number argument's value, or empty if the argument is not a literal (or the planner
     * no longer knows, see {@link #isNullLiteral}).
     */
    private static Optional<BigDecimal> literal(CallContext ctx, int i) {
        try {
            return ctx.isArgumentLiteral(i) && !ctx.isArgumentNull(i)
                    ? literalValue(ctx, i)
                    : Optional.empty();
        } catch (UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    private static Optional<BigDecimal> literalValue(CallContext ctx, int i) {
        Optional<BigDecimal> d = ctx.getArgumentValue(i, BigDecimal.class);
        if (d.isPresent()) {
            return d;
        }
        Optional<Long> l = ctx.getArgumentValue(i, Long.class);
        if (l.isPresent()) {
            return Optional.of(BigDecimal.valueOf(l.get()));
        }
        Optional<Integer> n = ctx.getArgumentValue(i, Integer.class);
        if (n.isPresent()) {
            return Optional.of(BigDecimal.valueOf(n.get()));
        }
        Optional<Double> x = ctx.getArgumentValue(i, Double.class);
        return x.map(BigDecimal::valueOf);
    }
}
