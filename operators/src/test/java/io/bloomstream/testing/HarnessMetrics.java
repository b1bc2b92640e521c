package io.bloomstream.testing;

import io.bloomstream.flink.dedup.DedupHarness;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.metrics.groups.TaskManagerMetricGroup;
import org.apache.flink.runtime.metrics.groups.TaskMetricGroup;
import org.apache.flink.runtime.metrics.util.TestingMetricRegistry;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;

/**
 * A mock task environment for operator test harnesses whose metric group registers with a registry
 * that keeps the metrics of the operator's group, so a test reads them back by name as a reporter
 * would. One instance per harness (per run: a restore gets a new one, as a restarted task does);
 * close it after the harness (the harness does not close an environment it was given).
 */
public final class HarnessMetrics implements AutoCloseable {

    private final Map<String, Metric> operatorMetrics = new ConcurrentHashMap<>();
    private final MockEnvironment environment;

    public HarnessMetrics(int maxParallelism, int parallelism, int subtask) {
        TestingMetricRegistry registry =
                TestingMetricRegistry.builder()
                        .setRegisterConsumer(
                                (metric, name, group) -> {
                                    if (group instanceof OperatorMetricGroup) {
                                        operatorMetrics.put(name, metric);
                                    }
                                })
                        .build();
        TaskMetricGroup task =
                TaskManagerMetricGroup.createTaskManagerMetricGroup(
                                registry, "localhost", ResourceID.generate())
                        .addJob(new JobID(), "job")
                        .addTask(ExecutionAttemptID.randomId(), "task");
        environment =
                new MockEnvironmentBuilder()
                        .setMetricGroup(task)
                        .setMaxParallelism(maxParallelism)
                        .setParallelism(parallelism)
                        .setSubtaskIndex(subtask)
                        .build();
    }

    /** For a harness of one subtask. */
    public HarnessMetrics() {
        this(DedupHarness.MAX_PARALLELISM, 1, 0);
    }

    @Override
    public void close() throws Exception {
        environment.close();
    }

    public MockEnvironment environment() {
        return environment;
    }

    private Metric metric(String name) {
        Metric m = operatorMetrics.get(name);
        if (m == null) {
            throw new AssertionError(
                    "no metric " + name + " in the operator's group: " + operatorMetrics.keySet());
        }
        return m;
    }

    /** The count of the counter {@code name}. */
    public long count(String name) {
        return ((Counter) metric(name)).getCount();
    }

    /** A read of the gauge {@code name} (some gauges reset on read). */
    public Object gauge(String name) {
        return ((Gauge<?>) metric(name)).getValue();
    }

    /** A read of a numeric gauge. */
    public double number(String name) {
        return ((Number) gauge(name)).doubleValue();
    }
}
