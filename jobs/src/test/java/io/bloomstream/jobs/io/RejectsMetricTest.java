package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

/**
 * Tests for the metric of {@link Rejects}: a local job reports {@value Rejects#METRIC} through a
 * configured metric reporter, in the group of the operator that parses.
 */
class RejectsMetricTest {

    /** Keeps the counters named {@value Rejects#METRIC}, by operator name. */
    public static final class Reporter implements MetricReporter, MetricReporterFactory {
        static final Map<String, Counter> COUNTERS = new ConcurrentHashMap<>();

        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new Reporter();
        }

        @Override
        public void open(MetricConfig config) {}

        @Override
        public void close() {}

        @Override
        public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
            if (Rejects.METRIC.equals(name)) {
                String operator = group.getAllVariables().get("<operator_name>");
                COUNTERS.put(
                        operator + "/" + group.getAllVariables().get("<subtask_index>"),
                        (Counter) metric);
            }
        }

        @Override
        public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}
    }

    @Test
    void countsEveryRejectedRecordInTheParsingOperatorsGroup() throws Exception {
        Configuration conf = new Configuration();
        conf.setString("metrics.reporter.mem.factory.class", Reporter.class.getName());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        Reporter.COUNTERS.clear();
        env.fromData(List.of("a", "bad", "b", "bad", "c", "bad"))
                .process(
                        new Rejects(
                                line -> {
                                    if (line.equals("bad")) {
                                        throw new LineParser.BadRecord("bad line");
                                    }
                                    return new Parsed(line, line, new String[0]);
                                }))
                .returns(Parsed.TYPE)
                .name("parse")
                .sinkTo(new DiscardingSink<>());
        env.execute("rejects-metric");
        long total = 0;
        for (Map.Entry<String, Counter> e : Reporter.COUNTERS.entrySet()) {
            assertThat(e.getKey()).startsWith("parse/");
            total += e.getValue().getCount();
        }
        assertThat(Reporter.COUNTERS).isNotEmpty();
        assertThat(total).isEqualTo(3);
    }
}
