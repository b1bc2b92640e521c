package io.bloomstream.flink;

import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.OutputTag;

/** Builds keyed test harnesses around the dedup function; events are "key,id" strings. */
final class DedupHarness {

    static final int MAX_PARALLELISM = 128;
    static final TypeInformation<String> TYPE = Types.STRING;
    static final OutputTag<String> DUPLICATES = BloomDedup.duplicatesTag(TYPE);
    static final OutputTag<String> REJECTED = BloomDedup.rejectedTag(TYPE);
    static final OutputTag<String> LATE = BloomDedup.lateTag(TYPE);

    enum Backend {
        HEAP,
        ROCKSDB;

        StateBackend create() {
            return this == HEAP ? new HashMapStateBackend() : new EmbeddedRocksDBStateBackend();
        }

        /** A job configuration on this backend with Kryo disabled, so a fallback fails loudly. */
        Configuration jobConfig() {
            Configuration conf = new Configuration();
            conf.set(StateBackendOptions.STATE_BACKEND, this == HEAP ? "hashmap" : "rocksdb");
            conf.set(PipelineOptions.GENERIC_TYPES, false);
            return conf;
        }
    }

    /** The mini cluster of the ITs: two task managers with two slots each. */
    static MiniClusterExtension miniCluster() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(2)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }

    private DedupHarness() {}

    static IdSelector<String> idSelector() {
        return IdSelector.ofString(DedupHarness::id);
    }

    static String key(String event) {
        return event.substring(0, event.indexOf(','));
    }

    static String id(String event) {
        return event.substring(event.indexOf(',') + 1);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config, Backend backend, int parallelism, int subtask) throws Exception {
        return create(config, backend, parallelism, subtask, config.expectedItems(), 0);
    }

    /**
     * A harness whose function sizes each key's filter for {@code itemsPerKey} ids and runs in
     * per-key mode ({@code shards} 0) or as one of {@code shards} virtual keys of global mode.
     */
    static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config,
            Backend backend,
            int parallelism,
            int subtask,
            long itemsPerKey,
            int shards)
            throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new BloomDedupOperator<>(function(config, itemsPerKey, shards), config),
                        DedupHarness::key,
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
    static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config, Backend backend, HarnessMetrics metrics) throws Exception {
        return create(config, backend, metrics, config.expectedItems(), 0);
    }

    /**
     * As {@link #create(DedupConfig, Backend, int, int, long, int)}, for the subtask of {@code
     * metrics}' environment, whose metrics are read back through it.
     */
    static KeyedOneInputStreamOperatorTestHarness<String, String, String> create(
            DedupConfig config,
            Backend backend,
            HarnessMetrics metrics,
            long itemsPerKey,
            int shards)
            throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new BloomDedupOperator<>(function(config, itemsPerKey, shards), config),
                        DedupHarness::key,
                        Types.STRING,
                        metrics.environment());
        h.setStateBackend(backend.create());
        return h;
    }

    /** The pages in the keyed state, counted key by key through the backend (heap or RocksDB). */
    static long pagesInState(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        if (h.getOperator() instanceof BloomDedupOperator<?, ?> op) {
            op.flush(); // the write-back cache, as a checkpoint would
        }
        org.apache.flink.runtime.state.KeyedStateBackend<String> backend =
                ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>)
                                h.getOperator())
                        .getKeyedStateBackend();
        List<String> keys;
        try (var stream =
                backend.getKeys(
                        BloomDedupFunction.PAGES_STATE,
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
                                    BloomDedupFunction.PAGES_STATE,
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
    static BloomDedupFunction<String, String> function(
            DedupConfig config, long itemsPerKey, int shards) {
        return new BloomDedupFunction<>(
                idSelector(), config, itemsPerKey, shards, DUPLICATES, REJECTED, LATE);
    }

    /** Keys that hold any filter state, counted through the keyed backend (heap or RocksDB). */
    static long keysWithState(KeyedOneInputStreamOperatorTestHarness<String, String, String> h)
            throws Exception {
        if (h.getOperator() instanceof BloomDedupOperator<?, ?> op) {
            op.flush(); // the write-back cache, as a checkpoint would
        }
        var backend =
                ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>)
                                h.getOperator())
                        .getKeyedStateBackend();
        try (var meta =
                        backend.getKeys(
                                BloomDedupFunction.META_STATE,
                                org.apache.flink.runtime.state.VoidNamespace.INSTANCE);
                var pages =
                        backend.getKeys(
                                BloomDedupFunction.PAGES_STATE,
                                org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return meta.count() + pages.count();
        }
    }

    static List<String> output(KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
        return h.extractOutputValues();
    }

    static List<String> side(
            KeyedOneInputStreamOperatorTestHarness<String, String, String> h,
            OutputTag<String> tag) {
        if (h.getSideOutput(tag) == null) {
            return List.of();
        }
        return h.getSideOutput(tag).stream()
                .map(StreamRecord::getValue)
                .collect(Collectors.toList());
    }
}
