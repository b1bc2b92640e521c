package io.bloomstream.flink.dedup;

import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.state.FilterJudge;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.FilterMetrics;
import io.bloomstream.flink.state.GenerationPolicy;
import io.bloomstream.flink.state.StageShapes;
import io.bloomstream.flink.state.StateLayout;
import org.apache.flink.annotation.Internal;

/** The {@link FilterJudge} of a {@link DedupConfig}, for the DataStream operator and SQL. */
@Internal
public final class DedupJudges {

    private DedupJudges() {}

    /**
     * A judge of keys whose filters are sized for {@code itemsPerKey} ids; see {@link
     * FilterJudge#FilterJudge(FilterJudge.Settings, FilterMetrics, long, boolean)} for {@code run}
     * and {@code adoptRecordedHash}.
     */
    public static FilterJudge create(
            DedupConfig config,
            long itemsPerKey,
            FilterMetrics metrics,
            long run,
            boolean adoptRecordedHash) {
        return new FilterJudge(settings(config, itemsPerKey), metrics, run, adoptRecordedHash);
    }

    /** The judge's view of {@code config} for keys of {@code itemsPerKey} ids. */
    static FilterJudge.Settings settings(DedupConfig config, long itemsPerKey) {
        int domain = StateLayout.domainOf(config.retentionPolicy());
        long lateness =
                domain == FilterMeta.DOMAIN_EVENT_TIME ? config.allowedLateness().toMillis() : 0;
        return new FilterJudge.Settings(
                new StageShapes(
                        config.sizing(),
                        config.generationItems(itemsPerKey),
                        config.fpp() / config.generations()),
                config.growth() == FilterSizing.Growth.SCALABLE,
                new GenerationPolicy(config.retentionMillis(), lateness),
                domain,
                config.generationMillis(),
                config.generations(),
                config.hasher(),
                config.resetRetentionOnDuplicate(),
                config.exact(),
                config.toString());
    }
}
