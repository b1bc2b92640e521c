package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.flink.FilterSizing;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/** The shapes of a key's cascade stages under one config and per-key capacity, each made once. */
@Internal
public final class StageShapes {

    private final FilterSizing sizing;
    private final long items;
    private final double rate;
    private final List<FilterSpec> specs = new ArrayList<>();

    /**
     * @param items the items the cascade is sized for (one generation's share under retention)
     * @param rate the cascade's compound rate budget (fpp / generations under retention)
     */
    public StageShapes(FilterSizing sizing, long items, double rate) {
        this.sizing = sizing;
        this.items = items;
        this.rate = rate;
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
            specs.add(sizing.stageSpec(items, rate, specs.size()));
        }
        FilterSpec spec = specs.get(index);
        return new FilterMeta.Stage(
                spec.bits(), spec.hashes(), spec.pageBits(), sizing.stageCapacity(items, index), 0);
    }
}
