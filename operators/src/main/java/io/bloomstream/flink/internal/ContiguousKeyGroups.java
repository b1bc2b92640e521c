package io.bloomstream.flink.internal;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.BatchExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Turns off the adaptive batch scheduler's choice of parallelism on a bootstrap's environment. With
 * it on, a bootstrap subtask can be handed key groups outside the contiguous range its state
 * backend takes (seen at 2*10^6 ids at parallelism 2: "Key group 62 is not in
 * KeyGroupRange{startKeyGroup=64, endKeyGroup=127}"), and Flink's bootstrap runner swallows that
 * subtask's failure: the savepoint would lack its state.
 */
@Internal
public final class ContiguousKeyGroups {

    private ContiguousKeyGroups() {}

    /** Sets {@code execution.batch.adaptive.auto-parallelism.enabled} to false on {@code env}. */
    public static void require(StreamExecutionEnvironment env) {
        Configuration conf = new Configuration();
        conf.set(BatchExecutionOptions.ADAPTIVE_AUTO_PARALLELISM_ENABLED, false);
        env.configure(conf);
    }
}
