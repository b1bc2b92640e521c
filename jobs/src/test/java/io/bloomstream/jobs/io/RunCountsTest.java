package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.accumulators.Accumulator;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.StreamMap;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link RunCounts} through {@link Tally}: a count restored from a checkpoint of the same
 * scope (the input a recovery reads on) goes on from there; one of another scope (a new input)
 * starts from zero.
 */
class RunCountsTest {

    private static OneInputStreamOperatorTestHarness<String, String> harness(String scope)
            throws Exception {
        var h = new OneInputStreamOperatorTestHarness<>(new StreamMap<>(new Tally<String>("n")));
        Configuration parameters = new Configuration();
        parameters.setString(RunCounts.SCOPE, scope);
        h.getExecutionConfig().setGlobalJobParameters(parameters);
        return h;
    }

    private static long accumulator(OneInputStreamOperatorTestHarness<?, ?> h, String name) {
        Accumulator<?, ?> a = h.getEnvironment().getAccumulatorRegistry().getUserMap().get(name);
        return a == null ? -1 : (Long) a.getLocalValue();
    }

    private static OperatorSubtaskState countThree(String scope) throws Exception {
        try (var h = harness(scope)) {
            h.open();
            for (String s : new String[] {"a", "b", "c"}) {
                h.processElement(new StreamRecord<>(s));
            }
            return h.snapshot(1, 1);
        }
    }

    @Test
    void theSameScopeCountsOnFromTheCheckpoint() throws Exception {
        OperatorSubtaskState three = countThree("input-1");
        try (var h = harness("input-1")) {
            h.initializeState(three);
            h.open();
            h.processElement(new StreamRecord<>("d"));
            assertThat(accumulator(h, "n")).isEqualTo(4);
            assertThat(accumulator(h, "n" + RunCounts.RESUMED)).isEqualTo(3);
        }
    }

    @Test
    void anotherScopeStartsFromZero() throws Exception {
        OperatorSubtaskState three = countThree("input-1");
        try (var h = harness("input-2")) {
            h.initializeState(three);
            h.open();
            h.processElement(new StreamRecord<>("d"));
            assertThat(accumulator(h, "n")).isEqualTo(1);
            assertThat(accumulator(h, "n" + RunCounts.RESUMED)).isZero();
        }
    }
}
