package io.bloomstream.benchmarks;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.internal.HashedEvent;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

/**
 * The operator's own cost per event, without a job around it: the operator that {@code
 * BloomDedup.global(stream, IdSelector.ofString(..) or ofLong(..), DedupConfig.builder()
 * .expectedItems(n).fpp(p).build())} adds (taken from the public API's transformation, with its own
 * shard key selector) driven by a {@link KeyedOneInputStreamOperatorTestHarness} on one thread,
 * against a keyed pass-through operator driven the same way. Prints, per event, the thread's CPU
 * time and the bytes it allocated (the JVM's per-thread counter), and Bloom minus pass-through.
 *
 * <p>Input: n distinct ids in a scrambled order, then the same n again (each id seen twice), as
 * {@code JobBenchmark} sends them, event i at time i ms, a watermark at i - 1000 every 4096 events;
 * string ids are the decimal text of the long ids, made before the timed loop. Each run is preceded
 * by a warm-up run of the same operator kind on other ids.
 *
 * <p>Usage: {@code java -Xmx6g -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.OperatorLoop [ids=10000000] [fpp=0.01] [backend=heap|rocksdb]
 * [type=string|long] [pipelines=pass-through,bloom-default,bloom-bundled] [rounds=1]}; pipelines:
 * {@code bloom-default}, {@code bloom-bundled} (bundles of 256 / 10 ms), {@code bloom-unbundled},
 * {@code bloom-earliest} ({@code FirstBy.EVENT_TIME}: each event waits in state for the watermark,
 * one event per millisecond, watermarks 1 s behind every 4096 events), and each with {@code
 * bloom-128} for {@code bloom} (strategy XXH3_128, the hash path before issue 21).
 */
public final class OperatorLoop {

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private OperatorLoop() {}

    public static void main(String[] args) throws Exception {
        long ids = 10_000_000;
        double fpp = 0.01;
        String backend = "heap";
        String type = "string";
        String[] pipelines = {"pass-through", "bloom-default", "bloom-bundled"};
        int rounds = 1;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "ids" -> ids = (long) Double.parseDouble(kv[1]);
                case "fpp" -> fpp = Double.parseDouble(kv[1]);
                case "backend" -> backend = kv[1];
                case "type" -> type = kv[1];
                case "pipelines" -> pipelines = kv[1].split(",");
                case "rounds" -> rounds = Integer.parseInt(kv[1]);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        boolean strings = type.equals("string");
        Object[] input = input(ids, strings, 0);
        Object[] warm = input(Math.min(ids, 1_000_000), strings, 1);
        System.out.printf(
                Locale.ROOT,
                "OperatorLoop: %d ids x 2, p=%s, %s ids, %s backend%n",
                ids,
                fpp,
                type,
                backend);
        double pass = Double.NaN;
        double passAlloc = Double.NaN;
        for (int r = 0; r < rounds; r++) {
            for (String p : pipelines) {
                run(p, warm, ids, fpp, backend, strings); // warm-up: JIT, not measured
                double[] m = run(p, input, ids, fpp, backend, strings);
                if (p.equals("pass-through")) {
                    pass = m[0];
                    passAlloc = m[1];
                }
                System.out.printf(
                        Locale.ROOT,
                        "%-14s %8.1f ns/event CPU, %7.2f B/event allocated;"
                                + " above pass-through: %8.1f ns, %7.2f B%n",
                        p,
                        m[0],
                        m[1],
                        m[0] - pass,
                        m[1] - passAlloc);
            }
        }
    }

    /** Records of each id twice: ids in a scrambled order (JobBenchmark's), then again. */
    static Object[] input(long ids, boolean strings, long salt) {
        Object[] out = new Object[(int) (2 * ids)];
        for (int i = 0; i < ids; i++) {
            long id = JobBenchmark.idOf(i, ids) + salt * 0x7F4A7C15L;
            Object v = strings ? Long.toString(id) : (Object) id;
            out[i] = v;
            out[(int) (i + ids)] = v;
        }
        return out;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static double[] run(
            String pipeline, Object[] input, long ids, double fpp, String backend, boolean strings)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        OneInputStreamOperator op;
        KeySelector keys;
        org.apache.flink.api.common.typeinfo.TypeInformation keyType;
        if (pipeline.equals("pass-through")) {
            op = new KeyedProcessOperator<>(new PassThrough());
            keys = v -> v;
            keyType = strings ? Types.STRING : Types.LONG;
        } else {
            DedupConfig.Builder b = DedupConfig.builder().expectedItems(ids).fpp(fpp);
            String variant = pipeline;
            if (variant.startsWith("bloom-128")) { // the hash path before issue 21, same JVM
                b.hashStrategy(io.bloomstream.filter.HashStrategy.XXH3_128);
                variant = "bloom" + variant.substring("bloom-128".length());
                variant = variant.equals("bloom") ? "bloom-default" : variant;
            }
            if (variant.equals("bloom-bundled")) {
                b.bundle(256, java.time.Duration.ofMillis(10));
            } else if (variant.equals("bloom-unbundled")) {
                b.noBundles();
            } else if (variant.equals("bloom-earliest")) {
                b.firstBy(io.bloomstream.flink.dedup.FirstBy.EVENT_TIME);
            } else if (!variant.equals("bloom-default")) {
                throw new IllegalArgumentException("unknown pipeline " + pipeline);
            }
            SingleOutputStreamOperator<?> out;
            DedupConfig config = b.build();
            if (config.hasher().is64Bit()) {
                // global mode hashes each id before its keyBy, outside the dedup operator: that
                // step's work is not the operator's, so the records come hashed, as in a job
                input = hashed(input, strings, config);
            }
            if (strings) {
                DataStream<String> s = env.fromData("x");
                out = BloomDedup.global(s, IdSelector.ofString(v -> v), config);
            } else {
                DataStream<Long> s = env.fromData(1L);
                out = BloomDedup.global(s, IdSelector.ofLong(v -> v), config);
            }
            OneInputTransformation t = (OneInputTransformation) out.getTransformation();
            op =
                    (OneInputStreamOperator)
                            ((SimpleOperatorFactory) t.getOperatorFactory()).getOperator();
            keys = t.getStateKeySelector();
            keyType = t.getStateKeyType();
        }
        KeyedOneInputStreamOperatorTestHarness h =
                new KeyedOneInputStreamOperatorTestHarness(op, keys, keyType, 128, 1, 0);
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend();
        if (backend.equals("rocksdb-heap-timers")) {
            rocks.setPriorityQueueStateType(
                    EmbeddedRocksDBStateBackend.PriorityQueueStateType.HEAP);
        }
        h.setStateBackend(backend.startsWith("rocksdb") ? rocks : new HashMapStateBackend());
        h.open();
        long cpu0 = MX.getCurrentThreadCpuTime();
        long alloc0 = MX.getCurrentThreadAllocatedBytes();
        var record = new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<Object>(null);
        for (int i = 0; i < input.length; i++) {
            record.replace(input[i], i);
            h.processElement(record);
            if ((i & 4095) == 4095) {
                h.processWatermark(i - 1000);
                h.getOutput().clear();
            }
        }
        h.endInput();
        long cpu = MX.getCurrentThreadCpuTime() - cpu0;
        long alloc = MX.getCurrentThreadAllocatedBytes() - alloc0;
        h.close();
        return new double[] {(double) cpu / input.length, (double) alloc / input.length};
    }

    /** The records with their ids' hashes, as global mode's step before its keyBy makes them. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object[] hashed(Object[] input, boolean strings, DedupConfig config) {
        var hash =
                strings
                        ? new HashedEvent.Hash<>(
                                IdSelector.<Object>ofString(v -> (String) v),
                                config.hasher(),
                                (TypeInformation) Types.STRING)
                        : new HashedEvent.Hash<>(
                                IdSelector.<Object>ofLong(v -> (Long) v),
                                config.hasher(),
                                (TypeInformation) Types.LONG);
        Object[] out = new Object[input.length];
        for (int i = 0; i < input.length; i++) {
            out[i] = hash.map(input[i]);
        }
        return out;
    }

    /** Emits every record: the keyed job that keeps no state. */
    static final class PassThrough extends KeyedProcessFunction<Object, Object, Object> {
        @Override
        public void processElement(Object value, Context ctx, Collector<Object> out) {
            out.collect(value);
        }
    }
}
