package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.flink.dedup.DedupConfig;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/** The shapes of a key's cascade stages under one config and per-key capacity, each made once. */
@Internal
public final class StageShapes {

    private final DedupConfig config;
    private final long itemsPerKey;
    private final List<FilterSpec> specs = new ArrayList<>();

    public StageShapes(DedupConfig config, long itemsPerKey) {
        this.config = config;
        this.itemsPerKey = itemsPerKey;
    }

    /**
     * A new, empty stage number {@code index}.
     *
     * @throws IllegalStateException past {@link ScalableBloomFilter#MAX_STAGES} stages
     */
    public FilterMeta.Stage newStage(int index) {
        if (index >= ScalableBloomFilter.MAX_STAGES) {
            throw new IllegalStateException(
                    "a key's cascade reached "
                            + index
                            + " stages: far more items than expectedItems; raise it");
        }
        while (specs.size() <= index) {
            specs.add(config.stageSpec(itemsPerKey, specs.size()));
        }
        FilterSpec spec = specs.get(index);
        return new FilterMeta.Stage(
                spec.bits(),
                spec.hashes(),
                spec.pageBits(),
                config.stageCapacity(itemsPerKey, index),
                0);
    }
}
