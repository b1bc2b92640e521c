package io.bloomstream.flink.dedup;

import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import io.bloomstream.testing.KeyedEvents;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;

/** Builds keyed test harnesses around the dedup function; events are "key,id" strings. */
public final class DedupHarness {

    public static final int MAX_PARALLELISM = 128;
    static final TypeInformation<String> TYPE = Types.STRING;
    static final OutputTag<String> DUPLICATES = BloomDedup.duplicatesTag(TYPE);
    static final OutputTag<String> REJECTED = BloomDedup.rejectedTag(TYPE);
    static final OutputTag<String> LATE = BloomDedup.lateTag(TYPE);

    private DedupHarness() {}

    public static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config, Backend backend, int parallelism, int subtask) throws Exception {
        return create(config, backend, parallelism, subtask, config.expectedItems(), 0);
    }

    /**
     * A harness whose function sizes each key's filter for {@code itemsPerKey} ids and runs in
     * per-key mode ({@code shards} 0) or as one of {@code shards} virtual keys of global mode.
     */
    public static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config,
            Backend backend,
            int parallelism,
            int subtask,
            long itemsPerKey,
            int shards)
            throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new DedupOperator<>(function(config, itemsPerKey, shards), config),
                        KeyedEvents::key,
                        Types.STRING,
                        MAX_PARALLELISM,
                        parallelism,
                        subtask);
        h.setStateBackend(backend.create());
        return h;
    }

    /**
     * A one-subtask harness whose operator metrics are read back through {@code metrics} (see
     * {@link HarnessMetrics}).
     */
    public static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config, Backend backend, HarnessMetrics metrics) throws Exception {
        return create(config, backend, metrics, config.expectedItems(), 0);
    }

    /**
     * As {@link #create(DedupConfig, Backend, int, int, long, int)}, for the subtask of {@code
     * metrics}' environment, whose metrics are read back through it.
     */
    public static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config,
            Backend backend,
            HarnessMetrics metrics,
            long itemsPerKey,
            int shards)
            throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new DedupOperator<>(function(config, itemsPerKey, shards), config),
                        KeyedEvents::key,
                        Types.STRING,
                        metrics.environment());
        h.setStateBackend(backend.create());
        return h;
    }

    /** The pages in the keyed state, counted key by key through the backend (heap or RocksDB). */
    static long pagesInState(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        if (h.getOperator() instanceof DedupOperator<?, ?> op) {
            op.judgeBundleNow(); // the bundle, as a barrier would
            op.flush(); // the write-back cache, as a checkpoint would
        }
        org.apache.flink.runtime.state.KeyedStateBackend<String> backend =
                ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>)
                                h.getOperator())
                        .getKeyedStateBackend();
        List<String> keys;
        try (var stream =
                backend.getKeys(
                        DedupFunction.PAGES_STATE,
                        org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            keys = stream.collect(Collectors.toList());
        }
        long pages = 0;
        for (String key : keys) {
            backend.setCurrentKey(key);
            var state =
                    backend.getPartitionedState(
                            org.apache.flink.runtime.state.VoidNamespace.INSTANCE,
                            org.apache.flink.runtime.state.VoidNamespaceSerializer.INSTANCE,
                            new org.apache.flink.api.common.state.MapStateDescriptor<>(
                                    DedupFunction.PAGES_STATE,
                                    org.apache.flink.api.common.typeutils.base.LongSerializer
                                            .INSTANCE,
                                    io.bloomstream.flink.typeutils.PageSerializer.INSTANCE));
            for (Long ignored : state.keys()) {
                pages++;
            }
        }
        return pages;
    }

    /** The dedup function on "key,id" events with the test tags. */
    static DedupFunction<String, String> function(
            DedupConfig config, long itemsPerKey, int shards) {
        return new DedupFunction<>(
                KeyedEvents.idSelector(), config, itemsPerKey, shards, DUPLICATES, REJECTED, LATE);
    }

    /** Keys that hold any filter state, counted through the keyed backend (heap or RocksDB). */
    static long keysWithState(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        if (h.getOperator() instanceof DedupOperator<?, ?> op) {
            op.judgeBundleNow(); // the bundle, as a barrier would
            op.flush(); // the write-back cache, as a checkpoint would
        }
        var backend =
                ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>)
                                h.getOperator())
                        .getKeyedStateBackend();
        try (var meta =
                        backend.getKeys(
                                DedupFunction.META_STATE,
                                org.apache.flink.runtime.state.VoidNamespace.INSTANCE);
                var pages =
                        backend.getKeys(
                                DedupFunction.PAGES_STATE,
                                org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return meta.count() + pages.count();
        }
    }

    /**
     * Judges the events waiting in the operator's bundle (bundles are on by default), as a
     * checkpoint barrier, a watermark or the end of input would, so that the outputs read next hold
     * every event processed so far.
     */
    public static void judge(KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
        if (h.getOperator() instanceof DedupOperator<?, ?> op) {
            try {
                op.judgeBundleNow();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** The main output so far, the bundle judged first ({@link #judge}). */
    public static List<String> output(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
        judge(h);
        return h.extractOutputValues();
    }

    static List<String> side(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            OutputTag<String> tag) {
        judge(h);
        if (h.getSideOutput(tag) == null) {
            return List.of();
        }
        return h.getSideOutput(tag).stream()
                .map(StreamRecord::getValue)
                .collect(Collectors.toList());
    }
}
