package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.EarliestModel.Event;
import io.bloomstream.flink.dedup.EarliestModel.Expect;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tests {@link FirstBy#EVENT_TIME} against the exact {@link EarliestModel}: random streams (fixed
 * seeds) of three keys and 20 ids each with disorder, late events, events within the allowed
 * lateness, ties, watermarks and snapshot/restore at random points, on heap and RocksDB, with and
 * without retention, in exact mode and not. Every event's outcome is checked: late ones on the late
 * output at once, nothing on the main output before the watermark, and at each watermark, per key,
 * the passed events in the model's order (event time, then arrival) with their timestamps, the rest
 * on the duplicates output. At the end (watermark at {@code Long.MAX_VALUE}) no event waits, and
 * under retention no key keeps state.
 *
 * <p>False positives: without exact mode the filters run at fpp 10^-6; a clear first dropped is
 * counted and at most 3 allowed per run (a few thousand clear firsts at 10^-6 each: the chance of
 * even one is below 1%, and the seeds are fixed, so a failure means a bug).
 */
class EarliestModelTest {

    private static final int STEPS = 600;
    private static final long BASE = 1_000_000;
    private static final long DISORDER = 40;
    private static final int IDS = 20;

    /** The configs: retention none or 60 ms, exact or not, allowed lateness 0 to 25 ms. */
    static DedupConfig config(int i) {
        DedupConfig.Builder b =
                DedupConfig.builder()
                        .expectedItems(100)
                        .fpp(1e-6)
                        .emitDuplicates(true)
                        .firstBy(FirstBy.EVENT_TIME);
        switch (i) {
            case 0:
                return b.exact(true).build();
            case 1:
                return b.allowedLateness(Duration.ofMillis(15)).build();
            case 2:
                return b.exact(true)
                        .retention(Duration.ofMillis(60), TimeDomain.EVENT_TIME)
                        .generations(2)
                        .build();
            case 3:
                return b.exact(true)
                        .retention(Duration.ofMillis(60), TimeDomain.EVENT_TIME)
                        .generations(3)
                        .allowedLateness(Duration.ofMillis(25))
                        .build();
            case 4:
                return b.retention(Duration.ofMillis(60), TimeDomain.EVENT_TIME)
                        .generations(2)
                        .allowedLateness(Duration.ofMillis(10))
                        .build();
            default:
                throw new IllegalArgumentException("config " + i);
        }
    }

    static Stream<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (int c = 0; c < 5; c++) {
            for (long seed : new long[] {20261128L, 7L, 424242L}) {
                runs.add(Arguments.of(Backend.HEAP, c, seed));
            }
            runs.add(Arguments.of(Backend.ROCKSDB, c, 31337L + c));
        }
        return runs.stream();
    }

    @ParameterizedTest(name = "{0} config {1} seed {2}")
    @MethodSource("runs")
    void matchesTheModel(Backend backend, int configIndex, long seed) throws Exception {
        DedupConfig config = config(configIndex);
        Run run = new Run(config, backend, new Random(seed));
        try {
            run.run();
        } finally {
            run.h.close();
        }
        System.out.printf(
                "earliest model %s config %d seed %d: %d judged (%d duplicates), %d late, %d"
                        + " restores, %d clear firsts, %d dropped%n",
                backend,
                configIndex,
                seed,
                run.judged,
                run.dropped,
                run.lateEvents,
                run.restores,
                run.clearFirsts,
                run.falseDrops);
        assertThat(run.judged).as("events judged").isGreaterThan(250);
        assertThat(run.falseDrops).as("clear firsts dropped of %d", run.clearFirsts).isLessThan(4);
    }

    /** One run: the operator in a harness and the model side by side. */
    private static final class Run {
        final DedupConfig config;
        final Backend backend;
        final Random random;
        final EarliestModel model;
        KeyedOneInputStreamOperatorTestHarness<String, String, String> h;
        long seq;
        long frontier = BASE;
        long lastWatermark = Long.MIN_VALUE;
        final List<Event> sent = new ArrayList<>();
        int clearFirsts;
        int falseDrops;
        int lateEvents;
        int judged;
        int dropped;
        int restores;

        Run(DedupConfig config, Backend backend, Random random) {
            this.config = config;
            this.backend = backend;
            this.random = random;
            this.model = new EarliestModel(config);
        }

        void run() throws Exception {
            h = DedupHarness.create(config, backend, 1, 0);
            h.open();
            for (int step = 0; step < STEPS; step++) {
                int r = random.nextInt(100);
                if (r < 1) {
                    restore(step);
                } else if (r < 76) {
                    event();
                } else {
                    watermark(frontier - DISORDER - random.nextInt((int) DISORDER / 2));
                }
            }
            watermark(Long.MAX_VALUE);
            assertThat(model.waiting()).isZero();
            assertThat(EarliestDedupTest.pendingKeys(h)).as("keys with waiting events").isZero();
            if (config.hasRetention()) {
                assertThat(DedupHarness.keysWithState(h)).as("keys with filter state").isZero();
            }
            assertThat(h.numEventTimeTimers()).as("event-time timers left").isZero();
        }

        private void event() throws Exception {
            frontier += random.nextInt(4);
            long time;
            int kind = random.nextInt(100);
            if (kind < 4 && !sent.isEmpty()) {
                Event tie = sent.get(sent.size() - 1 - random.nextInt(Math.min(5, sent.size())));
                send(new Event(seq++, tie.key(), tie.id(), tie.time())); // a tie, or a copy
                return;
            } else if (kind < 14 && lastWatermark != Long.MIN_VALUE) {
                time = lastWatermark - random.nextInt(30); // late, or within the lateness
            } else {
                time = frontier - DISORDER + random.nextInt((int) (2 * DISORDER + 1));
            }
            send(new Event(seq++, "k" + random.nextInt(3), "i" + random.nextInt(IDS), time));
        }

        private void send(Event e) throws Exception {
            sent.add(e);
            boolean onTime = model.arrive(e);
            h.processElement(e.value(), e.time());
            assertThat(EarliestDedupTest.main(h)).as("main output on arrival of %s", e).isEmpty();
            List<String> late = take(DedupHarness.LATE);
            lateEvents += onTime ? 0 : 1;
            if (onTime) {
                assertThat(late).as("late output on arrival of %s", e).isEmpty();
            } else {
                assertThat(late).as("late output on arrival of %s", e).containsExactly(e.record());
            }
        }

        private void watermark(long w) throws Exception {
            if (w <= lastWatermark) {
                return;
            }
            lastWatermark = w;
            List<Event> released = model.watermark(w);
            h.processWatermark(w);
            Map<String, List<String>> passedByKey = new HashMap<>();
            for (String record : EarliestDedupTest.main(h)) {
                passedByKey.computeIfAbsent(key(record), k -> new ArrayList<>()).add(record);
            }
            h.getOutput().clear();
            List<String> duplicates = new ArrayList<>(take(DedupHarness.DUPLICATES));
            Map<String, Integer> next = new HashMap<>();
            for (Event e : released) {
                List<String> passed = passedByKey.getOrDefault(e.key(), List.of());
                int i = next.getOrDefault(e.key(), 0);
                boolean didPass = i < passed.size() && passed.get(i).equals(e.record());
                if (didPass) {
                    next.put(e.key(), i + 1);
                } else {
                    assertThat(duplicates.remove(e.record()))
                            .as("%s neither passed in order nor on the duplicates output", e)
                            .isTrue();
                }
                Expect expect = model.expect(e);
                switch (expect) {
                    case PASS:
                        clearFirsts++;
                        assertThat(didPass).as("clear first %s at watermark %d", e, w).isTrue();
                        break;
                    case FIRST:
                        clearFirsts++;
                        falseDrops += didPass ? 0 : 1;
                        break;
                    case DUPLICATE:
                        assertThat(didPass).as("duplicate %s at watermark %d", e, w).isFalse();
                        break;
                    default:
                        break;
                }
                model.record(e, didPass);
                judged++;
                dropped += didPass ? 0 : 1;
            }
            for (Map.Entry<String, List<String>> k : passedByKey.entrySet()) {
                assertThat(next.getOrDefault(k.getKey(), 0))
                        .as("passed records of key %s in order: %s", k.getKey(), k.getValue())
                        .isEqualTo(k.getValue().size());
            }
            assertThat(duplicates).as("duplicates the model did not release").isEmpty();
        }

        /** A snapshot, then a new operator restored from it (a stop with savepoint and a start). */
        private void restore(int step) throws Exception {
            restores++;
            var snapshot = h.snapshot(step, step);
            h.close();
            h = DedupHarness.create(config, backend, 1, 0);
            h.initializeState(snapshot);
            h.open();
            if (lastWatermark != Long.MIN_VALUE) {
                // the source's watermarks resume; the model releases nothing new with it
                long w = lastWatermark;
                lastWatermark = Long.MIN_VALUE;
                watermark(w);
            }
        }

        private List<String> take(OutputTag<String> tag) {
            var records = h.getSideOutput(tag);
            if (records == null) {
                return List.of();
            }
            List<String> values = new ArrayList<>();
            for (StreamRecord<String> r : records) {
                values.add(r.getValue() + "@" + r.getTimestamp());
            }
            records.clear();
            return values;
        }

        private static String key(String record) {
            return record.substring(0, record.indexOf(','));
        }
    }
}
