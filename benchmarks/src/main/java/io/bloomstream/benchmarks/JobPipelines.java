package io.bloomstream.benchmarks;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The pipelines {@link JobBenchmark} measures, by name: the keyed pass-through (the baseline),
 * Bloom dedup with the default config ("bloom-default") and its named variants ("bloom-NAME",
 * {@link #VARIANTS}), and the exact dedup a Flink user writes today ("exact", a {@code
 * ValueState<Boolean>} per id); each on long ids, or with {@link #STRING_IDS} on their decimal
 * text.
 */
final class JobPipelines {

    static final String PASS_THROUGH = "pass-through";
    static final String EXACT = "exact";
    static final String BLOOM_PREFIX = "bloom-";

    /** The headline Bloom pipeline: the default config, p and n only. */
    static final String BLOOM_DEFAULT = BLOOM_PREFIX + "default";

    /**
     * Named variants of the default Bloom config, each run as pipeline "bloom-NAME" after {@link
     * #BLOOM_DEFAULT}: a customizer of the builder that already has expectedItems and fpp. Add one
     * with one line.
     */
    static final Map<String, UnaryOperator<DedupConfig.Builder>> VARIANTS = new LinkedHashMap<>();

    static {
        VARIANTS.put("fixed", DedupConfig.Builder::fixed); // one filter, no cascade (issue 3)
        // the default without the write-back cache: every event reads and writes keyed state
        VARIANTS.put("nocache", b -> b.cacheBytes(0));
        // bundles of up to 256 events or 10 ms, named (the default since issue 21)
        VARIANTS.put("bundled", b -> b.bundle(256, java.time.Duration.ofMillis(10)));
        // the cascade split of 0.4 and earlier (Almeida's: stage i at p (1 - r) r^i, r = 0.9),
        // the default before issue 21
        VARIANTS.put("almeida", b -> b.scalable(2, 0.9).firstStageShare(0.1));
        // the default with 4096-bit state pages (issue 21: per-entry overhead against heap speed)
        VARIANTS.put("pages4096", b -> b.pageBits(4096));
        // events judged one at a time (the default before issue 21)
        VARIANTS.put("unbundled", DedupConfig.Builder::noBundles);
        // the hash path before issue 21: XXH3-128 (what state of 0.4 and before restores with)
        VARIANTS.put("xxh3-128", b -> b.hashStrategy(io.bloomstream.filter.HashStrategy.XXH3_128));
        // exact mode (issue 31): the filter in front of the ids themselves
        VARIANTS.put("exact", b -> b.exact(true));
    }

    private JobPipelines() {}

    /**
     * The suffix of a pipeline on string ids ({@code bloom-default:string}): the long ids as their
     * decimal text (a map before the keyed operator, the same in every string pipeline).
     */
    static final String STRING_IDS = ":string";

    /** Whether {@code pipeline} is exact dedup, on long or string ids. */
    static boolean isExact(String pipeline) {
        return pipeline.equals(EXACT) || pipeline.equals(EXACT + STRING_IDS);
    }

    /** The pipeline under test on {@code ids}. */
    static DataStream<?> pipeline(String pipeline, DataStream<Long> ids, long distinct, double p) {
        if (pipeline.endsWith(STRING_IDS)) {
            String base = pipeline.substring(0, pipeline.length() - STRING_IDS.length());
            DataStream<String> strings =
                    ids.map(id -> Long.toString(id)).returns(Types.STRING).name("to-string");
            return typed(base, strings, Types.STRING, IdSelector.ofString(id -> id), distinct, p);
        }
        return typed(pipeline, ids, Types.LONG, IdSelector.ofLong(id -> id), distinct, p);
    }

    private static <T> DataStream<T> typed(
            String pipeline,
            DataStream<T> ids,
            org.apache.flink.api.common.typeinfo.TypeInformation<T> type,
            IdSelector<T> idSelector,
            long distinct,
            double p) {
        if (pipeline.equals(PASS_THROUGH)) {
            return ids.keyBy(id -> id, type)
                    .process(new PassThrough<T>())
                    .returns(type)
                    .uid("pass");
        }
        if (pipeline.equals(EXACT)) {
            return ids.keyBy(id -> id, type)
                    .process(new ExactDedup<T>())
                    .returns(type)
                    .uid("exact");
        }
        DedupConfig.Builder config = DedupConfig.builder().expectedItems(distinct).fpp(p);
        if (!pipeline.equals(BLOOM_DEFAULT)) {
            config = VARIANTS.get(pipeline.substring(BLOOM_PREFIX.length())).apply(config);
        }
        return BloomDedup.global(ids, idSelector, config.build());
    }

    /** Forwards every record (the keyed baseline). */
    static final class PassThrough<T> extends KeyedProcessFunction<T, T, T> {
        @Override
        public void processElement(T value, Context ctx, Collector<T> out) {
            out.collect(value);
        }
    }

    /** Exact dedup: one ValueState<Boolean> per id. */
    static final class ExactDedup<T> extends KeyedProcessFunction<T, T, T> {
        private transient ValueState<Boolean> seen;

        @Override
        public void open(OpenContext ctx) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void processElement(T value, Context ctx, Collector<T> out) throws Exception {
            if (seen.value() == null) {
                seen.update(Boolean.TRUE);
                out.collect(value);
            }
        }
    }
}
