package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.DUPLICATES;
import static io.bloomstream.flink.dedup.DedupHarness.LATE;
import static io.bloomstream.flink.dedup.DedupHarness.output;
import static io.bloomstream.flink.dedup.DedupHarness.side;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An event that was late before a restore must not pass as a first after it. Flink does not
 * checkpoint watermarks: a restored operator sees {@code Long.MIN_VALUE} until its input's next
 * watermark, so an event the old watermark made late is judged against state whose generation of
 * its time may already be freed. The function keeps its largest watermark in operator state ({@link
 * DedupFunction#WATERMARK_STATE}) and judges against it after a restore.
 */
class RestoreLatenessTest {

    private static final DedupConfig CONFIG =
            DedupConfig.builder()
                    .expectedItems(150)
                    .fpp(0.05)
                    .retention(Duration.ofSeconds(5), TimeDomain.EVENT_TIME)
                    .generations(3)
                    .allowedLateness(Duration.ofMillis(500))
                    .build();

    @ParameterizedTest
    @EnumSource(Backend.class)
    void anEventLateBeforeARestoreIsNotAFirstAfterIt(Backend backend) throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = DedupHarness.create(CONFIG, backend, 1, 0)) {
            h.open();
            h.processElement("k1,i1", 10_000);
            h.processWatermark(30_000); // frees the generation of 10 s (retention 5 s)
            h.processElement("k1,i1", 11_000); // late: 11 s + 0.5 s <= 30 s
            assertThat(side(h, LATE)).containsExactly("k1,i1");
            snapshot = h.snapshot(1, 1);
        }
        try (var h = DedupHarness.create(CONFIG, backend, 1, 0)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement("k1,i1", 11_000); // the same event, replayed before any watermark
            assertThat(output(h)).as("passed as a first").isEmpty();
            assertThat(side(h, LATE).size() + side(h, DUPLICATES).size()).isEqualTo(1);
        }
    }
}
