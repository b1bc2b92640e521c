package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tests for the bundles of {@link DedupOperator}: a differential test against the operator without
 * bundles (whose behaviour {@code DedupModelTest} checks against the exact model). The same random
 * streams (disorder, late and far-future events, events without id or timestamp, watermarks,
 * processing-time advances, snapshots and restores, with and without retention, on both backends,
 * with the write-back cache off, tiny and default) go through both; at every point where a bundle
 * must have been judged (a watermark, a checkpoint barrier, the end of input) the main output and
 * every side output must be equal, record for record and in the same order. Equal hashes and the
 * same order of judging make the decisions identical, false positives included, so any difference
 * is a bug.
 */
class BundleDifferentialTest {

    private static final int CASES = Integer.getInteger("bloomstream.bundleCases", 16);

    static List<Object[]> cases() {
        List<Object[]> cases = new ArrayList<>();
        for (int seed = 0; seed < CASES; seed++) {
            cases.add(new Object[] {seed, seed % 4 == 3 ? Backend.ROCKSDB : Backend.HEAP});
        }
        return cases;
    }

    /** The outputs of one side, kept across restores. */
    private static final class Side {
        final DedupConfig config;
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h;
        final List<String> main = new ArrayList<>();
        final List<String> duplicates = new ArrayList<>();
        final List<String> late = new ArrayList<>();
        final List<String> rejected = new ArrayList<>();

        Side(DedupConfig config) {
            this.config = config;
        }

        void drain() {
            main.addAll(DedupHarness.output(h));
            duplicates.addAll(DedupHarness.side(h, DedupHarness.DUPLICATES));
            late.addAll(DedupHarness.side(h, DedupHarness.LATE));
            rejected.addAll(DedupHarness.side(h, DedupHarness.REJECTED));
            h.getOutput().clear();
            if (h.getSideOutput(DedupHarness.DUPLICATES) != null) {
                h.getSideOutput(DedupHarness.DUPLICATES).clear();
            }
            if (h.getSideOutput(DedupHarness.LATE) != null) {
                h.getSideOutput(DedupHarness.LATE).clear();
            }
            if (h.getSideOutput(DedupHarness.REJECTED) != null) {
                h.getSideOutput(DedupHarness.REJECTED).clear();
            }
        }
    }

    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("cases")
    void bundlesJudgeExactlyAsOneAtATime(int seed, Backend backend) throws Exception {
        Random r = new Random(seed);
        DedupConfig.Builder b =
                DedupConfig.builder()
                        .expectedItems(20 + r.nextInt(300))
                        .fpp(0.01 + r.nextInt(10) / 100.0)
                        .cacheBytes(
                                new long[] {0, 600, DedupConfig.DEFAULT_CACHE_BYTES}[r.nextInt(3)])
                        .emitDuplicates(true);
        int mode = r.nextInt(3); // 0 none, 1 event time, 2 processing time
        if (mode > 0) {
            b.retention(
                            Duration.ofMillis(30 + r.nextInt(300)),
                            mode == 1 ? TimeDomain.EVENT_TIME : TimeDomain.PROCESSING_TIME)
                    .generations(2 + r.nextInt(4));
            if (mode == 1 && r.nextBoolean()) {
                b.allowedLateness(Duration.ofMillis(r.nextInt(40)));
            }
        }
        DedupConfig plain = b.noBundles().build();
        int bundleSize = 2 + r.nextInt(40);
        DedupConfig bundled = b.bundle(bundleSize, Duration.ofMillis(5 + r.nextInt(20))).build();
        Side one = new Side(plain);
        Side many = new Side(bundled);
        open(one, backend, null);
        open(many, backend, null);
        long now = 1_000_000;
        long watermark = Long.MIN_VALUE;
        long checkpoint = 0;
        boolean sawBundle = false;
        for (int step = 0; step < 800; step++) {
            int what = r.nextInt(100);
            if (what < 85) {
                now += r.nextInt(4);
                String event = "k" + r.nextInt(6) + "," + (r.nextInt(50) == 0 ? "" : r.nextInt(80));
                int stamp = r.nextInt(40);
                StreamRecord<String> rec =
                        stamp == 0
                                ? new StreamRecord<>(event) // no timestamp
                                : new StreamRecord<>(
                                        event, stamp == 1 ? now + 1_000_000 : now - r.nextInt(150));
                one.h.processElement(rec.copy(rec.getValue()));
                many.h.processElement(rec.copy(rec.getValue()));
                sawBundle |= ((DedupOperator<?, ?>) many.h.getOperator()).bundled() > 0;
            } else if (what < 92) {
                long wm = now - r.nextInt(100);
                if (wm > watermark) {
                    watermark = wm;
                    one.h.processWatermark(wm);
                    many.h.processWatermark(wm);
                    assertSame(one, many, "after watermark " + wm);
                }
            } else if (what < 97) {
                // processing time: the bundle is judged at the barrier-like flush first, so both
                // sides judge every event at the same clock
                many.h.prepareSnapshotPreBarrier(++checkpoint);
                now += r.nextInt(60);
                one.h.setProcessingTime(now);
                many.h.setProcessingTime(now);
                assertSame(one, many, "after processing time " + now);
            } else {
                checkpoint++;
                many.h.prepareSnapshotPreBarrier(checkpoint);
                assertSame(one, many, "at checkpoint " + checkpoint);
                OperatorSubtaskState a = one.h.snapshot(checkpoint, now);
                OperatorSubtaskState c = many.h.snapshot(checkpoint, now);
                one.drain();
                many.drain();
                one.h.close();
                many.h.close();
                open(one, backend, a);
                open(many, backend, c);
                one.h.setProcessingTime(now);
                many.h.setProcessingTime(now);
                if (watermark != Long.MIN_VALUE) {
                    one.h.processWatermark(watermark);
                    many.h.processWatermark(watermark);
                }
            }
        }
        one.h.processWatermark(Long.MAX_VALUE);
        many.h.processWatermark(Long.MAX_VALUE);
        assertSame(one, many, "at the end");
        one.h.close();
        many.h.close();
        assertThat(sawBundle).as("events waited in bundles").isTrue();
        assertThat(one.main.size() + one.duplicates.size() + one.late.size() + one.rejected.size())
                .as("every event leaves once")
                .isPositive();
    }

    private static void open(Side side, Backend backend, OperatorSubtaskState state)
            throws Exception {
        side.h = DedupHarness.create(side.config, backend, 1, 0);
        if (state != null) {
            side.h.initializeState(state);
        }
        side.h.open();
    }

    private static void assertSame(Side one, Side many, String where) {
        one.drain();
        many.drain();
        assertThat(many.main).as("main output " + where).isEqualTo(one.main);
        assertThat(many.duplicates).as("duplicates " + where).isEqualTo(one.duplicates);
        assertThat(many.late).as("late " + where).isEqualTo(one.late);
        assertThat(many.rejected).as("rejected " + where).isEqualTo(one.rejected);
    }
}
