package io.bloomstream.table;

import io.bloomstream.filter.Estimate;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.table.internal.SqlArguments.Arg;
import io.bloomstream.table.internal.SqlArguments.Kind;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.AggregateFunction;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/**
 * {@code BLOOM_COUNT_DISTINCT(value [, expected_items [, fpp [, 'retract']]])} -> BIGINT: the
 * number of distinct non-NULL values, estimated from the bits of a Bloom filter kept in paged
 * state. An aggregate function for streaming and batch {@code GROUP BY} and for window TVF
 * aggregations ({@code TUMBLE}, {@code HOP}, {@code CUMULATE}); it has {@code merge}, so windows
 * share slices and the planner may aggregate in two phases (local, then global).
 *
 * <pre>{@code
 * SELECT page, BLOOM_COUNT_DISTINCT(user_id, 100000, 0.01) AS users FROM clicks GROUP BY page;
 * }</pre>
 *
 * <p><b>Guarantee.</b> The result is the estimate n = m ln(m / (m - X)) / k of the filter's bits
 * ({@link Estimate}: m bits, X of them set, k hashes; corrected for the paged layout), within about
 * three of its standard errors of the exact {@code COUNT(DISTINCT value)} (about 1% of n at n =
 * expected_items and fpp = 0.01, less below). Since it is read from the bits, a value seen again, a
 * replayed row after a restore, or the same rows merged twice never change it. It is NULL when the
 * filter is saturated (so few zero bits left that the bits cannot bound the count: past about 19
 * times expected_items at fpp = 0.01), never a wrong number. A group with no non-NULL value counts
 * 0.
 *
 * <p><b>Arguments.</b> {@code value}: a STRING (hashed as UTF-8), an integer of any width (hashed
 * as its 64-bit value, so INT 5 and BIGINT 5 are the same value) or BYTES; NULL values are ignored,
 * as {@code COUNT(DISTINCT)} ignores them. {@code expected_items} (default {@value
 * #DEFAULT_EXPECTED_ITEMS}) sizes the filter for the largest group; {@code fpp} (default 0.01) its
 * false-positive rate there. A literal out of range (expected_items &lt;= 0, fpp outside (0, 1)) or
 * an argument of another type fails at planning time, naming the argument; values that are not
 * literals are checked on each row.
 *
 * <p><b>State.</b> Per group: the filter's non-empty pages, one {@code MapView} entry each
 * (2048-bit pages, 256 bytes, for filters of more than 8192 bits), and a few counters. A row reads
 * and writes one page; the set-bit count is kept as pages change, so the result reads none. A
 * group's state is at most m / 8 bytes (about 1.2 MB at the defaults) and about one page per
 * distinct value while the group is small. The first row of a group decides its filter's shape; a
 * later row or an accumulator to merge with another shape is an error naming both.
 *
 * <p><b>Updating input: the counting form.</b> {@code BLOOM_COUNT_DISTINCT(value, expected_items,
 * fpp, 'retract')} keeps a counter (4 bits, widened to 8 then 16 bits per page by the data) in
 * place of each bit, so it takes retractions: on a table with updates and deletes (a CDC or upsert
 * source, the result of another {@code GROUP BY}, a join) the estimate follows the values present,
 * as {@code COUNT(DISTINCT)} does: a value inserted twice and retracted once is still counted. The
 * guarantee above holds for the values present, with the estimate read from the counters above
 * zero. A counter at 65,535 sticks (the estimate may then count a removed value, never miss a
 * present one); a retraction of a value whose counters are not all above zero changes none of them
 * (in a two-phase aggregation's local accumulator it waits, pending, for the merge into the group's
 * state, which applies every add before any retraction). State is about 3.5 times the plain form's
 * while no counter passes 15 (4-bit counters in place of bits). Flink tells an aggregate nothing
 * about its input's changelog, so the user chooses: the plain form (one to three arguments) has no
 * {@code retract}, and the planner refuses it on updating input with "Could not find an
 * implementation method 'retract'".
 *
 * <p>Table API: {@code call(CountDistinctAggFunction.class, $("user_id"))}, or after {@link
 * BloomFunctions#registerAll} {@code call("BLOOM_COUNT_DISTINCT", $("user_id"))}.
 */
@PublicEvolving
public class CountDistinctAggFunction extends AggregateFunction<Long, BloomAccumulator> {

    private static final long serialVersionUID = 1L;

    /** The SQL name. */
    public static final String NAME = "BLOOM_COUNT_DISTINCT";

    /** The default expected_items: {@value}. */
    public static final long DEFAULT_EXPECTED_ITEMS = DedupConfig.DEFAULT_EXPECTED_ITEMS;

    /** The default fpp: {@value}. */
    public static final double DEFAULT_FPP = DedupConfig.DEFAULT_FPP;

    private transient SqlArguments.SpecCache specs;

    @Override
    public BloomAccumulator createAccumulator() {
        return new BloomAccumulator();
    }

    /** Adds {@code value} to a filter of the default size. */
    public void accumulate(BloomAccumulator acc, Object value) throws Exception {
        accumulate(acc, value, DEFAULT_EXPECTED_ITEMS, DEFAULT_FPP);
    }

    /** Adds {@code value} to a filter for {@code expectedItems} at the default fpp. */
    public void accumulate(BloomAccumulator acc, Object value, Long expectedItems)
            throws Exception {
        accumulate(acc, value, expectedItems, DEFAULT_FPP);
    }

    /** Adds {@code value} (NULL: ignored) to a filter for {@code expectedItems} at {@code fpp}. */
    public void accumulate(BloomAccumulator acc, Object value, Long expectedItems, Double fpp)
            throws Exception {
        if (specs == null) {
            specs = new SqlArguments.SpecCache(NAME);
        }
        acc.accumulate(specs, NAME, value, expectedItems, fpp);
    }

    /**
     * The counting form, for updating input: adds one occurrence of {@code value} (NULL: ignored)
     * to a counting filter for {@code expectedItems} at {@code fpp}. {@code mode} is the literal
     * {@code 'retract'}, checked at planning time.
     */
    public void accumulate(
            BloomAccumulator acc, Object value, Long expectedItems, Double fpp, String mode)
            throws Exception {
        checkMode(mode);
        acc.accumulateCounting(specs, NAME, value, expectedItems, fpp);
    }

    /**
     * The counting form's retraction: removes one occurrence of {@code value} (NULL: ignored), so
     * the estimate follows the values present. Only the counting form has it: the planner refuses
     * the plain form (one to three arguments) on updating input.
     */
    public void retract(
            BloomAccumulator acc, Object value, Long expectedItems, Double fpp, String mode)
            throws Exception {
        checkMode(mode);
        acc.retractCounting(specs, NAME, value, expectedItems, fpp);
    }

    /** Checks the mode (once an instance: it is a literal) and sets up the shape cache. */
    private void checkMode(String mode) {
        if (specs == null) {
            if (!SqlArguments.isRetract(mode)) {
                throw new IllegalArgumentException(
                        NAME
                                + ": argument 'mode' must be '"
                                + SqlArguments.MODE_RETRACT
                                + "', was "
                                + (mode == null ? "NULL" : "'" + mode + "'"));
            }
            specs = new SqlArguments.SpecCache(NAME);
        }
    }

    /**
     * Merges the filters of {@code others} into {@code acc}: ORs plain filters; adds the counters
     * of counting ones and cancels their pending retractions.
     */
    public void merge(BloomAccumulator acc, Iterable<BloomAccumulator> others) throws Exception {
        acc.mergeAll(others, NAME);
    }

    @Override
    public Long getValue(BloomAccumulator acc) {
        if (!acc.hasShape()) {
            return 0L;
        }
        try {
            acc.applyLogs(); // an accumulator in memory (batch) applies what it logged
        } catch (Exception e) {
            throw new IllegalStateException(NAME + ": cannot read the accumulator", e);
        }
        Estimate e = acc.estimate();
        return e.saturated() ? null : Math.round(e.estimate());
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(
                        SqlArguments.strategy(
                                NAME,
                                1,
                                new Arg("value", Kind.VALUE),
                                new Arg("expected_items", Kind.EXPECTED_ITEMS),
                                new Arg("fpp", Kind.FPP),
                                new Arg("mode", Kind.MODE)))
                .accumulatorTypeStrategy(TypeStrategies.explicit(BloomAccumulator.dataType()))
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.BIGINT()))
                .build();
    }
}
