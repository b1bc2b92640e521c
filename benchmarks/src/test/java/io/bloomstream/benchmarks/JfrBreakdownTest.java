package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests for {@link JfrBreakdown}. */
class JfrBreakdownTest {

    private static JfrBreakdown.Sample sample(String... frames) {
        return new JfrBreakdown.Sample("jdk.ExecutionSample", "t", List.of(frames), false);
    }

    @Test
    void countsEachSampleOnceInTheFirstCategoryItMatches() {
        String eval = "io.bloomstream.table.DedupTableFunction.eval";
        String callEval = "ProcessTableRunner$15.callEval";
        List<JfrBreakdown.Sample> samples =
                List.of(
                        // the row state's read, under the runner: not "PTF operator, the rest"
                        sample(
                                "org.rocksdb.RocksDB.get",
                                "org.apache.flink.table.runtime.generated.ProcessTableRunner"
                                        + ".moveStateToFunction",
                                "org.apache.flink.table.runtime.generated.ProcessTableRunner"
                                        + ".processMethod"),
                        // a page put with TTL cleanup: the cleanup, not the put
                        sample(
                                "org.apache.flink.runtime.state.ttl.TtlIncrementalCleanup"
                                        + ".runCleanup",
                                "org.apache.flink.runtime.state.ttl.TtlMapState.put",
                                eval,
                                callEval),
                        // the input conversion: under callEval but not under eval
                        sample(
                                "org.apache.flink.table.data.conversion.RowRowConverter"
                                        + ".toExternal",
                                callEval),
                        // our judge
                        sample(
                                "io.bloomstream.filter.FilterSpec.positions64",
                                "io.bloomstream.flink.state.FilterJudge.judge",
                                eval,
                                callEval),
                        sample("java.lang.Thread.run"));

        Map<String, Integer> counts = JfrBreakdown.categorize(samples);

        assertThat(counts)
                .containsEntry(
                        "PTF: declared row state (bloom_meta): read, convert, compare, write back",
                        1)
                .containsEntry("ours -> MapView state: TTL incremental cleanup", 1)
                .containsEntry("PTF: input row and argument conversion around eval", 1)
                .containsEntry("ours: judge (hash, probe, insert, page and metadata bytes)", 1)
                .containsEntry("other (mailbox, JIT, safepoints)", 1)
                .hasSize(5);
    }
}
