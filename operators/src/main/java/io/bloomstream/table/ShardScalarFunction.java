package io.bloomstream.table;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Wtf8;
import io.bloomstream.flink.dedup.DedupConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.FunctionDefinition;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.ArgumentCount;
import org.apache.flink.table.types.inference.CallContext;
import org.apache.flink.table.types.inference.ConstantArgumentCount;
import org.apache.flink.table.types.inference.InputTypeStrategy;
import org.apache.flink.table.types.inference.Signature;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeFamily;

/**
 * {@code BLOOM_SHARD(value [, shards])} -> {@code INT}: the shard in [0, shards) of a value, to
 * spread one global dedup over all parallel tasks:
 *
 * <pre>{@code
 * CREATE TEMPORARY VIEW sharded AS SELECT *, BLOOM_SHARD(url) AS shard FROM urls;
 * SELECT * FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard, id_column => 'url',
 *     expected_items => 1000000, fpp => 0.01, shards => 1024);  -- 10^6 ids in all
 * }</pre>
 *
 * <p>{@code BLOOM_DEDUP}'s {@code shards} argument takes the same count, so that its {@code
 * expected_items} counts the ids of the whole table (without it, the ids of one shard).
 *
 * <p>{@code value} is a {@code STRING} (hashed as its UTF-8 bytes, so a string and its UTF-8 {@code
 * BYTES} share a shard; lone surrogates as {@link Wtf8} encodes them), a {@code BYTES} value or an
 * integer ({@code TINYINT} to {@code BIGINT}, hashed as a BIGINT); {@code shards} an {@code INT},
 * by default {@value #DEFAULT_SHARDS} ({@link DedupConfig#DEFAULT_SHARDS}, as the DataStream global
 * dedup). A NULL value or NULL shard count gives NULL. A shard count that is not positive fails: at
 * planning time when it is a literal, otherwise when the row is processed (an {@link
 * IllegalArgumentException} naming {@code shards}).
 *
 * <p>The shard is a deterministic function of the value, the same on every machine, run and release
 * (it is part of the state of a dedup partitioned by it): the 64-bit XXH3 hash with the fixed seed
 * {@link #SEED}, reduced to [0, shards) by a multiply-shift of its upper 32 bits (Lemire, "A fast
 * alternative to the modulo reduction", 2016). It is not {@code String.hashCode}, whose collisions
 * anyone can write down; the seed is distinct from the dedup filters' seed, so the shard of an id
 * tells nothing about its page within the shard. The seed is public, so this spreads ordinary data
 * evenly but does not stop an adversary who reads this page from crafting values that share one
 * shard (which then fills its filter sooner: the dedup's scalable growth keeps its false-positive
 * rate).
 */
@PublicEvolving
public class ShardScalarFunction extends ScalarFunction {

    private static final long serialVersionUID = 1L;

    /** The default number of shards: {@link DedupConfig#DEFAULT_SHARDS}. */
    public static final int DEFAULT_SHARDS = DedupConfig.DEFAULT_SHARDS;

    /** The XXH3 seed of the shard hash ("bloomshd"); part of the contract, never changes. */
    public static final long SEED = 0x626c6f6f6d736864L;

    private static final Hasher HASHER = Hasher.xxh3_64(SEED);

    /** The shard of a string value. */
    public Integer eval(String value) {
        return eval(value, DEFAULT_SHARDS);
    }

    /** The shard of a string value among {@code shards}. */
    public Integer eval(String value, Integer shards) {
        if (value == null || shards == null) {
            return null;
        }
        byte[] utf8 = Wtf8.encode(value); // as BYTES of the same text: the same shard
        return reduce(HASHER.hash64(utf8, 0, utf8.length), checkShards(shards));
    }

    /** The shard of a bytes value. */
    public Integer eval(byte[] value) {
        return eval(value, DEFAULT_SHARDS);
    }

    /** The shard of a bytes value among {@code shards}. */
    public Integer eval(byte[] value, Integer shards) {
        return value == null || shards == null
                ? null
                : reduce(HASHER.hash64(value, 0, value.length), checkShards(shards));
    }

    /** The shard of an integer value. */
    public Integer eval(Long value) {
        return eval(value, DEFAULT_SHARDS);
    }

    /** The shard of an integer value among {@code shards}. */
    public Integer eval(Long value, Integer shards) {
        return value == null || shards == null
                ? null
                : reduce(HASHER.hash64(value), checkShards(shards));
    }

    /** The shard of {@code hash} among {@code shards}: the high 32 bits times shards, >>> 32. */
    static int reduce(long hash, int shards) {
        return (int) (((hash >>> 32) * shards) >>> 32);
    }

    private static int checkShards(int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException(
                    "BLOOM_SHARD: shards must be a positive INT, was " + shards);
        }
        return shards;
    }

    @Override
    public boolean isDeterministic() {
        return true;
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(new Arguments())
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.INT()))
                .build();
    }

    /** Checks and casts the arguments: value to STRING, BYTES or BIGINT; shards to INT. */
    private static final class Arguments implements InputTypeStrategy {

        @Override
        public ArgumentCount getArgumentCount() {
            return ConstantArgumentCount.between(1, 2);
        }

        @Override
        public Optional<List<DataType>> inferInputTypes(CallContext call, boolean throwOnFailure) {
            List<DataType> args = call.getArgumentDataTypes();
            List<DataType> casts = new ArrayList<>();
            LogicalType value = args.get(0).getLogicalType();
            if (value.is(LogicalTypeFamily.CHARACTER_STRING)) {
                casts.add(DataTypes.STRING());
            } else if (value.is(LogicalTypeFamily.BINARY_STRING)) {
                casts.add(DataTypes.BYTES());
            } else if (value.is(LogicalTypeFamily.INTEGER_NUMERIC)) {
                casts.add(DataTypes.BIGINT());
            } else {
                return call.fail(
                        throwOnFailure,
                        "BLOOM_SHARD: argument value must be STRING, BYTES or an integer"
                                + " (TINYINT to BIGINT), was %s",
                        value.asSummaryString());
            }
            if (args.size() == 2) {
                LogicalType shards = args.get(1).getLogicalType();
                if (!shards.is(LogicalTypeFamily.INTEGER_NUMERIC)) {
                    return call.fail(
                            throwOnFailure,
                            "BLOOM_SHARD: argument shards must be an INT, was %s",
                            shards.asSummaryString());
                }
                if (call.isArgumentLiteral(1) && !call.isArgumentNull(1)) {
                    Optional<Long> n = call.getArgumentValue(1, Long.class);
                    if (n.isPresent() && (n.get() < 1 || n.get() > Integer.MAX_VALUE)) {
                        return call.fail(
                                throwOnFailure,
                                "BLOOM_SHARD: argument shards must be a positive INT, was %s",
                                n.get());
                    }
                }
                casts.add(DataTypes.INT());
            }
            return Optional.of(casts);
        }

        @Override
        public List<Signature> getExpectedSignatures(FunctionDefinition definition) {
            return List.of(
                    Signature.of(Signature.Argument.of("value", "STRING | BYTES | BIGINT")),
                    Signature.of(
                            Signature.Argument.of("value", "STRING | BYTES | BIGINT"),
                            Signature.Argument.of("shards", "INT")));
        }
    }
}
