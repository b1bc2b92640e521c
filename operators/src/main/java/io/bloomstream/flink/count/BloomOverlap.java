package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.filter.SetEstimates;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.EventTimes;
import io.bloomstream.flink.internal.IdHashes;
import io.bloomstream.flink.internal.RejectLog;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.StateLayout;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.ArrayList;
import java.util.List;
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
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Set estimates between two keyed streams, for example users seen on site A and on site B per
 * campaign: each key keeps one filter per side, of the same shape, and emits an {@link
 * OverlapEstimate} at the end of each interval in which it received events, and at the end of
 * input.
 *
 * <p>Both sides need filters of one shape, so the config must use {@link FilterSizing.Growth#FIXED}
 * growth (the union of two cascades has no common shape); anything else is refused when the job is
 * built. Size it for the larger side.
 *
 * <p>Events without a usable id, and under event time events without a timestamp, are counted on
 * neither side: they go to the side output of their input ({@link #rejectedTagA}, {@link
 * #rejectedTagB}), are counted in the metric {@value #REJECTED} and logged (rate-limited).
 *
 * <p>Each side is estimated in the shape its filter was made with, and a side's first filter takes
 * the shape of the other side's filter when that exists, so after a restore with a config of
 * another size a key whose one side was made before keeps ORable sides and its union. Should a key
 * still hold sides of different shapes (state written before bloomstream 0.2), their bits are never
 * ORed: the key's records carry |A| and |B| but no union or intersection ({@code NaN}, {@code valid
 * = false}), the metric {@value #SHAPE_MISMATCH} counts them and a warning names both shapes.
 *
 * <p>Cost of an emission: |A| and |B| come from set-bit counts kept as pages change; the union
 * needs the bits set on both sides, one pass over the pages of the side with fewer pages, each
 * looked up on the other side.
 *
 * <p>The operator has uid and name {@link CountConfig#uidPrefix()}, default {@value #DEFAULT_UID}.
 */
@PublicEvolving
public final class BloomOverlap {

    /** The default operator uid and name (see {@link CountConfig.Builder#uidPrefix}). */
    public static final String DEFAULT_UID = "bloom-overlap";

    /** Counter: events without a usable id or timestamp (not counted on either side). */
    public static final String REJECTED = "bloomOverlapRejected";

    /** Counter: records whose union was not computed, the two sides having different shapes. */
    public static final String SHAPE_MISMATCH = "bloomOverlapShapeMismatch";

    private static final String REJECTED_A_ID = "bloom-overlap-rejected-a";
    private static final String REJECTED_B_ID = "bloom-overlap-rejected-b";
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(BloomOverlap.class);

    private BloomOverlap() {}

    /** The type of the records. */
    public static TypeInformation<OverlapEstimate> estimateType() {
        return Types.POJO(OverlapEstimate.class);
    }

    /** The side output of events of stream A without a usable id or (under event time) time. */
    public static <A> OutputTag<A> rejectedTagA(TypeInformation<A> type) {
        return new OutputTag<>(REJECTED_A_ID, type);
    }

    /** The side output of events of stream B without a usable id or (under event time) time. */
    public static <B> OutputTag<B> rejectedTagB(TypeInformation<B> type) {
        return new OutputTag<>(REJECTED_B_ID, type);
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
                .process(
                        new OverlapFunction<K, A, B>(
                                idA,
                                idB,
                                config,
                                rejectedTagA(a.getType()),
                                rejectedTagB(b.getType())),
                        estimateType())
                .name(config.uidPrefixOr(DEFAULT_UID))
                .uid(config.uidPrefixOr(DEFAULT_UID));
    }

    static void checkShape(CountConfig config) {
        if (config.filter().growth() != FilterSizing.Growth.FIXED) {
            throw new IllegalArgumentException(
                    "set estimates need FilterSizing.Growth.FIXED on both sides: the filters must"
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
        private final OutputTag<A> rejectedA;
        private final OutputTag<B> rejectedB;
        private transient Hasher hasher;
        private transient long[] hash; // the current event's (h1, h2), written without allocation
        private transient CountState[] sides;
        private transient EventTimes eventTimes;
        private transient MapState<Long, long[]>[] pages;
        private transient ValueState<Long> next;
        private transient FilterSpec spec;
        private transient boolean eventTime;
        private transient Counter rejected;
        private transient RejectLog rejectLog;
        private transient Counter shapeMismatch;

        OverlapFunction(
                IdSelector<A> idA,
                IdSelector<B> idB,
                CountConfig config,
                OutputTag<A> rejectedA,
                OutputTag<B> rejectedB) {
            this.idA = Objects.requireNonNull(idA, "idA");
            this.idB = Objects.requireNonNull(idB, "idB");
            this.config = Objects.requireNonNull(config, "config");
            this.rejectedA = Objects.requireNonNull(rejectedA, "rejectedA");
            this.rejectedB = Objects.requireNonNull(rejectedB, "rejectedB");
        }

        @Override
        @SuppressWarnings("unchecked")
        public void open(OpenContext ctx) {
            hasher = config.hasher();
            hash = new long[2];
            spec =
                    config.filter()
                            .stageSpec(config.filter().expectedItems(), config.filter().fpp(), 0);
            eventTime = config.timeDomain() == TimeDomain.EVENT_TIME;
            rejected = getRuntimeContext().getMetricGroup().counter(REJECTED);
            rejectLog = new RejectLog(LOG, REJECTED);
            eventTimes = new EventTimes(LOG, "Bloom overlap on event time");
            shapeMismatch = getRuntimeContext().getMetricGroup().counter(SHAPE_MISMATCH);
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
                                hasher,
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
            String reason = reason(IdHashes.hashInto(idA, event, hasher, hash), ctx);
            if (reason == null) {
                add(0, ctx);
            } else {
                reject(rejectedA, event, reason, ctx);
            }
        }

        @Override
        public void processElement2(B event, Context ctx, Collector<OverlapEstimate> out)
                throws Exception {
            String reason = reason(IdHashes.hashInto(idB, event, hasher, hash), ctx);
            if (reason == null) {
                add(1, ctx);
            } else {
                reject(rejectedB, event, reason, ctx);
            }
        }

        /** Why an event cannot be counted, or null if it can. */
        private String reason(boolean hashed, Context ctx) {
            if (!hashed) {
                return "no id (null or empty)";
            }
            return eventTime && eventTimes.of(ctx.timestamp()) == null ? "no timestamp" : null;
        }

        private <T> void reject(OutputTag<T> tag, T event, String reason, Context ctx) {
            rejected.inc();
            ctx.output(tag, event);
            rejectLog.rejected(rejected.getCount(), reason, event);
        }

        /** Adds the current event's {@link #hash} to a side. */
        private void add(int side, Context ctx) throws Exception {
            // A side's first filter takes the other side's shape, if it has one, so both stay
            // ORable after a restore with another config.
            if (sides[side].add(0, hash[0], hash[1], sides[1 - side])) {
                ctx.timerService().registerEventTimeTimer(END); // the final record
            }
            if (next.value() == null) {
                long now = eventTime ? ctx.timestamp() : ctx.timerService().currentProcessingTime();
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
            List<FilterSpec> shapeA = sides[0].stageSpecs(0);
            List<FilterSpec> shapeB = sides[1].stageSpecs(0);
            Estimate ea = side(0);
            Estimate eb = side(1);
            Estimate eu;
            if (shapeA.isEmpty() || shapeB.isEmpty()) {
                eu = shapeA.isEmpty() ? eb : ea; // one side is empty: the union is the other
            } else if (shapeA.equals(shapeB)) {
                eu = union(shapeA);
            } else {
                eu = null; // never OR pages of different shapes
                shapeMismatch.inc();
                if (shapeMismatch.getCount() <= 10 || shapeMismatch.getCount() % 10_000 == 0) {
                    LOG.warn(
                            "Key {}: no union or intersection, the sides' filters have different"
                                    + " shapes (A: {}, B: {}), as after a restore with another"
                                    + " config; {} such records so far, see metric {}",
                            key,
                            shapeA,
                            shapeB,
                            shapeMismatch.getCount(),
                            SHAPE_MISMATCH);
                }
            }
            OverlapEstimate r = new OverlapEstimate();
            r.key = key;
            r.a = ea.estimate();
            r.aError = ea.standardError();
            r.b = eb.estimate();
            r.bError = eb.standardError();
            if (eu == null) {
                r.union = Double.NaN;
                r.unionError = Double.NaN;
                r.intersection = Double.NaN;
                r.intersectionError = Double.NaN;
                r.valid = false;
            } else {
                r.union = eu.estimate();
                r.unionError = eu.standardError();
                Estimate both = SetEstimates.intersection(ea, eb, eu);
                r.intersection = both.estimate();
                r.intersectionError = both.standardError();
                r.valid = both.valid();
            }
            r.isFinal = isFinal;
            r.timestamp = timestamp;
            return r;
        }

        /** A side's estimate in the shapes its stages were made with (0 for an empty side). */
        private Estimate side(int i) throws Exception {
            Map.Entry<Estimate, Integer> e = sides[i].estimate(0);
            return e == null ? Estimate.of(0, spec) : e.getKey();
        }

        /**
         * The estimate of the OR of both sides, whose stages have the shapes {@code stages}: per
         * stage, |A OR B| = |A| + |B| - |A AND B| set bits. The sides' counts are kept as pages
         * change; the AND needs one pass over the pages of the side with fewer, each looked up on
         * the other side (the one scan left in an emission).
         */
        private Estimate union(List<FilterSpec> stages) throws Exception {
            long[] a = sides[0].setBits(0);
            long[] b = sides[1].setBits(0);
            long pagesA = sides[0].pages(0);
            long pagesB = sides[1].pages(0);
            int fewer = pagesB != FilterMeta.UNKNOWN_PAGES && pagesB < pagesA ? 1 : 0;
            long[] both = new long[stages.size()];
            for (Map.Entry<Long, long[]> e : pages[fewer].entries()) {
                long[] other = pages[1 - fewer].get(e.getKey());
                if (other != null) {
                    both[StateLayout.stageOf(e.getKey())] +=
                            Pages.bitCountAnd(e.getValue(), other); // equal shapes
                }
            }
            List<Estimate> parts = new ArrayList<>(stages.size());
            for (int i = 0; i < stages.size(); i++) {
                parts.add(Estimate.of(a[i] + b[i] - both[i], stages.get(i)));
            }
            return Estimate.sum(parts);
        }
    }
}
