package io.bloomstream.table;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.functions.UserDefinedFunction;

/**
 * Every bloomstream SQL function under its SQL name. The names are part of the contract: a script
 * written against one release runs against the next.
 *
 * <p>In a Java Table API program: {@code BloomFunctions.registerAll(tableEnv)}. In Flink's SQL
 * client, with the job jar on the class path: {@code CREATE FUNCTION BLOOM_SHARD AS
 * 'io.bloomstream.table.ShardScalarFunction'} for each entry of {@link #all()}.
 */
@PublicEvolving
public final class BloomFunctions {

    private static final Map<String, Class<? extends UserDefinedFunction>> ALL = functions();

    private BloomFunctions() {}

    private static Map<String, Class<? extends UserDefinedFunction>> functions() {
        Map<String, Class<? extends UserDefinedFunction>> all = new LinkedHashMap<>();
        // one line per function
        all.put("BLOOM_DEDUP", DedupTableFunction.class);
        all.put("BLOOM_SHARD", ShardScalarFunction.class);
        all.put(CountDistinctAggFunction.NAME, CountDistinctAggFunction.class);
        all.put(BuildFilterAggFunction.NAME, BuildFilterAggFunction.class);
        all.put(UnionAggFunction.NAME, UnionAggFunction.class);
        all.put(MightContainScalarFunction.NAME, MightContainScalarFunction.class);
        all.put(EstimateScalarFunction.NAME, EstimateScalarFunction.class);
        return Collections.unmodifiableMap(all);
    }

    /** The SQL name and implementing class of every function, in a stable order. */
    public static Map<String, Class<? extends UserDefinedFunction>> all() {
        return ALL;
    }

    /** Registers every function as a temporary system function of {@code env}. */
    public static void registerAll(TableEnvironment env) {
        ALL.forEach(env::createTemporarySystemFunction);
    }
}
