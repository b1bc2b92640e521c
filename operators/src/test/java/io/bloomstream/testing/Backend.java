package io.bloomstream.testing;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;

/** The state backends every operator is tested on. */
public enum Backend {
    HEAP("hashmap"),
    ROCKSDB("rocksdb");

    /** The backend's name in {@code state.backend.type}. */
    public final String typeName;

    Backend(String typeName) {
        this.typeName = typeName;
    }

    /** A new backend for a test harness. */
    public StateBackend create() {
        return this == HEAP ? new HashMapStateBackend() : new EmbeddedRocksDBStateBackend();
    }

    /** A job configuration on this backend with Kryo disabled, so a fallback fails loudly. */
    public Configuration jobConfig() {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, typeName);
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        return conf;
    }
}
