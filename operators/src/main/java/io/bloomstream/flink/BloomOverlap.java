package io.bloomstream.flink;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hash128;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.SetEstimates;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Set estimates between two keyed streams, for example users seen on site A and on site B per
 * campaign: each key keeps one filter per side, of the same shape, and emits an {@link
 * OverlapEstimate} at the end of each interval in which it received events, and at the end of
 * input.
 *
 * <p>Both sides need filters of one shape, so the config must use {@link DedupConfig.Growth#FIXED}
 * growth (the union of two cascades has no common shape); anything else is refused when the job is
 * built. Size it for the larger side.
 */
@PublicEvolving
public final class BloomOverlap {

    /** The default operator uid and name. */
    public static final String DEFAULT_UID = "bloom-overlap";

    /** Counter: events without a usable id (not counted on either side). */
    public static final String REJECTED = "bloomOverlapRejected";

    private BloomOverlap() {}

    /** The type of the records. */
    public static TypeInformation<OverlapEstimate> estimateType() {
        return Types.POJO(OverlapEstimate.class);
    }

    /**
     * Set estimates per key between {@code a} and {@code b} (keyed by equal keys).
     *
     * @throws IllegalArgumentException if the config does not use fixed growth
     */
    public static <A, B, K> SingleOutputStreamOperator<OverlapEstimate> between(
            KeyedStream<A, K> a,
            IdSelector<A> idA,
            KeyedStream<B, K> b,
            IdSelector<B> idB,
            CountConfig config) {
        checkShape(config);
        return a.connect(b)
                .process(new OverlapFunction<K, A, B>(idA, idB, config), estimateType())
                .name(DEFAULT_UID)
                .uid(DEFAULT_UID);
    }

    static void checkShape(CountConfig config) {
        if (config.filter().growth() != DedupConfig.Growth.FIXED) {
            throw new IllegalArgumentException(
                    "set estimates need DedupConfig.Growth.FIXED on both sides: the filters must"
                            + " share one shape to be ORed, which two growing cascades do not");
        }
        if (config.window() != null) {
            throw new IllegalArgumentException("set estimates do not support windows");
        }
    }

    /** The two filters of a key and their estimates. */
    static final class OverlapFunction<K, A, B>
            extends KeyedCoProcessFunction<K, A, B, OverlapEstimate> {
        private static final long serialVersionUID = 1L;
        private static final long END = Long.MAX_VALUE;

        private final IdSelector<A> idA;
        private final IdSelector<B> idB;
        private final CountConfig config;
        private transient Hasher hasher;
        private transient CountState[] sides;
        private transient MapState<Long, long[]>[] pages;
        private transient ValueState<Long> next;
        private transient FilterSpec spec;
        private transient org.apache.flink.metrics.Counter rejected;

        OverlapFunction(IdSelector<A> idA, IdSelector<B> idB, CountConfig config) {
            this.idA = Objects.requireNonNull(idA, "idA");
            this.idB = Objects.requireNonNull(idB, "idB");
            this.config = config;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void open(OpenContext ctx) {
            hasher = config.filter().hasher();
            spec = config.filter().stageSpec(config.filter().expectedItems(), 0);
            rejected = getRuntimeContext().getMetricGroup().counter(REJECTED);
            sides = new CountState[2];
            pages = new MapState[2];
            for (int i = 0; i < 2; i++) {
                String side = i == 0 ? "a" : "b";
                pages[i] =
                        getRuntimeContext()
                                .getMapState(
                                        new MapStateDescriptor<>(
                                                "bloom-overlap-pages-" + side,
                                                LongSerializer.INSTANCE,
                                                PageSerializer.INSTANCE));
                sides[i] =
                        new CountState(
                                config.filter(),
                                config.filter().expectedItems(),
                                1,
                                getRuntimeContext()
                                        .getState(
                                                new ValueStateDescriptor<>(
                                                        "bloom-overlap-meta-" + side,
                                                        FilterMetaSerializer.INSTANCE)),
                                pages[i]);
            }
            next =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "bloom-overlap-next", LongSerializer.INSTANCE));
        }

        @Override
        public void processElement1(A event, Context ctx, Collector<OverlapEstimate> out)
                throws Exception {
            add(0, idA.hash(event, hasher), ctx);
        }

        @Override
        public void processElement2(B event, Context ctx, Collector<OverlapEstimate> out)
                throws Exception {
            add(1, idB.hash(event, hasher), ctx);
        }

        private void add(int side, Hash128 hash, Context ctx) throws Exception {
            if (hash == null) {
                rejected.inc(); // no usable id: nothing to count
                return;
            }
            if (sides[side].add(0, hash.h1(), hash.h2())) {
                ctx.timerService().registerEventTimeTimer(END); // the final record
            }
            if (next.value() == null) {
                boolean eventTime = config.timeDomain() == DedupConfig.TimeDomain.EVENT_TIME;
                Long ts = eventTime ? ctx.timestamp() : null;
                long now =
                        eventTime
                                ? (ts == null ? 0 : ts)
                                : ctx.timerService().currentProcessingTime();
                long t = config.nextTick(now);
                if (eventTime) {
                    ctx.timerService().registerEventTimeTimer(t);
                } else {
                    ctx.timerService().registerProcessingTimeTimer(t);
                }
                next.update(t);
            }
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<OverlapEstimate> out)
                throws Exception {
            if (timestamp != END) {
                next.clear(); // the next event schedules the next emission
            }
            out.collect(estimate(String.valueOf(ctx.getCurrentKey()), timestamp, timestamp == END));
        }

        OverlapEstimate estimate(String key, long timestamp, boolean isFinal) throws Exception {
            Map<Long, long[]> union = new HashMap<>();
            long[] set = new long[2];
            for (int i = 0; i < 2; i++) {
                for (Map.Entry<Long, long[]> e : pages[i].entries()) {
                    set[i] += Pages.bitCount(e.getValue());
                    long[] words = union.get(e.getKey());
                    if (words == null) {
                        union.put(e.getKey(), e.getValue().clone());
                    } else {
                        for (int w = 0; w < words.length; w++) {
                            words[w] |= e.getValue()[w];
                        }
                    }
                }
            }
            long unionSet = 0;
            for (long[] words : union.values()) {
                unionSet += Pages.bitCount(words);
            }
            Estimate ea = Estimate.of(set[0], spec);
            Estimate eb = Estimate.of(set[1], spec);
            Estimate eu = Estimate.of(unionSet, spec);
            OverlapEstimate r = new OverlapEstimate();
            r.key = key;
            r.a = ea.estimate();
            r.aError = ea.standardError();
            r.b = eb.estimate();
            r.bError = eb.standardError();
            r.union = eu.estimate();
            r.unionError = eu.standardError();
            Estimate both = SetEstimates.intersection(ea, eb, eu);
            r.intersection = both.estimate();
            r.intersectionError = both.standardError();
            r.valid = both.valid();
            r.isFinal = isFinal;
            r.timestamp = timestamp;
            return r;
        }
    }
}
