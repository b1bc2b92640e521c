package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupMetrics;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.HarnessMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link DedupTableFunction} with {@code state_ttl} and no {@code on_time}: a retention
 * on processing time, as Flink's keep-first has it, run on a clock the test sets. With R = 2 s in 3
 * generations (L = 1 s): an id is a duplicate less than R after its first occurrence and passes
 * again R + L after it; a key's expired generations are freed when the key is next seen (no
 * processing-time timers for a process table function).
 */
class BloomDedupProcessingTimeTest {

    private final AtomicLong now = new AtomicLong();

    @AfterEach
    void wallClockAgain() {
        DedupTableFunction.clock = System::currentTimeMillis;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Backend.class)
    void anIdIsRememberedForTheRetentionOnProcessingTime(Backend backend) throws Exception {
        DedupTableFunction.clock = now::get;
        PtfHarness.Plan plan = plan();
        try (HarnessMetrics metrics = new HarnessMetrics()) {
            PtfHarness h = new PtfHarness(plan, metrics.environment());
            h.setStateBackend(backend.create());
            h.setupOutput();
            h.open();
            now.set(10_000);
            assertThat(send(h, plan, "a")).containsExactly("a");
            now.set(11_500); // 1.5 s < R after it
            assertThat(send(h, plan, "a")).isEmpty();
            assertThat(send(h, plan, "b")).containsExactly("b");
            now.set(13_100); // R + L = 3 s after a's first: forgotten, and its generation freed
            double pages = metrics.number(DedupMetrics.ALLOCATED_PAGES);
            assertThat(send(h, plan, "a")).containsExactly("a");
            assertThat(send(h, plan, "b")).isEmpty(); // 1.6 s after b
            now.set(100_000); // every generation expired: freed when the key is next seen
            assertThat(send(h, plan, "c")).containsExactly("c");
            assertThat(metrics.number(DedupMetrics.ALLOCATED_PAGES))
                    .as("pages after every old generation expired, were %s", pages)
                    .isLessThan(pages);
            assertThat(metrics.count(DedupMetrics.PASSED)).isEqualTo(4);
            assertThat(metrics.count(DedupMetrics.DUPLICATES)).isEqualTo(2);
            h.close();
        }
    }

    private static List<String> send(PtfHarness h, PtfHarness.Plan plan, String id)
            throws Exception {
        GenericRowData row = new GenericRowData(plan.inputType().getFieldCount());
        row.setField(plan.column("k"), StringData.fromString("k"));
        row.setField(plan.column("id"), StringData.fromString(id));
        h.processElement(row);
        List<String> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord<?> r) {
                out.add(((RowData) r.getValue()).getString(1).toString());
            }
        }
        h.getOutput().clear();
        return out;
    }

    private static PtfHarness.Plan plan() {
        return PtfHarness.planOverEvents(
                false,
                false,
                "SELECT * FROM BLOOM_DEDUP(input => TABLE events PARTITION BY k,"
                        + " id_column => 'id', expected_items => 100, fpp => 0.01,"
                        + " state_ttl => INTERVAL '2' SECOND, reset_ttl_on_duplicate => FALSE,"
                        + " generations => 3)");
    }
}
