package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupModel.Expect;
import io.bloomstream.flink.dedup.DedupModel.Outcome;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.FailOnce;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The model-based check of {@link BloomDedup} on a mini cluster: a seeded stream of keyed events
 * with disorder, bursts of late events, far-future and far-past timestamps and missing ids (events
 * without a timestamp are the harness model test's: a source with a timestamp assigner stamps every
 * record) runs at parallelism 2 with event-time retention, checkpoints and one injected failure
 * after a checkpoint, into exactly-once file sinks for each of the four outputs. Every event must
 * leave on exactly one output, and the outputs, read per key in the order the single source emitted
 * them (which is the order the operator saw them), must follow {@link DedupModel}. The watermark at
 * each event is not known here, so an event in the late output is checked to have been possibly
 * late (its timestamp + allowed lateness at or before the largest watermark the source could have
 * emitted before it), and is not judged by the model.
 */
class DedupModelITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    static final int EVENTS = 12_000;
    static final long OUT_OF_ORDERNESS = 2_000;
    static final long START = 1_700_000_000_000L;

    static final DedupConfig CONFIG =
            DedupConfig.builder()
                    .expectedItems(150)
                    .fpp(0.05)
                    .retention(Duration.ofSeconds(5), TimeDomain.EVENT_TIME)
                    .generations(3)
                    .allowedLateness(Duration.ofMillis(500))
                    .emitDuplicates(true)
                    .build();

    /**
     * Event i as "seq,key,id,timestamp,clock" (an empty id: a bad event). The clock is the
     * generator's notion of now, which drives the watermark, so that far-future timestamps do not
     * (as a production watermark generator would guard against too).
     */
    static final List<String> STREAM = generate(new Random(20261123));

    static List<String> generate(Random random) {
        List<String> events = new ArrayList<>(EVENTS);
        long now = START;
        for (int seq = 0; seq < EVENTS; seq++) {
            now += random.nextInt(3);
            String key = "k" + (int) Math.floor(Math.pow(random.nextDouble(), 2) * 8);
            String id = "i" + random.nextInt(120);
            double r = random.nextDouble();
            String ts;
            if (r < 0.005) {
                ts = Long.toString(now - 1_000_000_000L); // far past (a source always stamps)
            } else if (r < 0.01) {
                id = ""; // no id
                ts = Long.toString(now);
            } else if (r < 0.015) {
                ts = Long.toString(now + 1_000_000_000L); // far future
            } else if (r < 0.05) {
                ts = Long.toString(now - 4_000 - random.nextInt(6_000)); // late burst candidates
            } else {
                ts = Long.toString(now - random.nextInt((int) OUT_OF_ORDERNESS));
            }
            events.add(seq + "," + key + "," + id + "," + ts + "," + now);
        }
        return events;
    }

    static String key(String e) {
        return e.split(",", -1)[1];
    }

    static String id(String e) {
        return e.split(",", -1)[2];
    }

    static long clock(String e) {
        return Long.parseLong(e.split(",", -1)[4]);
    }

    /** Watermarks trail the newest clock value by the out-of-orderness bound. */
    static final class ClockWatermarks implements WatermarkGenerator<String> {
        private long max = Long.MIN_VALUE + OUT_OF_ORDERNESS + 1;

        @Override
        public void onEvent(String event, long timestamp, WatermarkOutput output) {
            max = Math.max(max, clock(event));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            output.emitWatermark(new Watermark(max - OUT_OF_ORDERNESS - 1));
        }
    }

    static Long timestamp(String e) {
        String t = e.split(",", -1)[3];
        return t.isEmpty() ? null : Long.parseLong(t);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void outputsFollowTheModelThroughAFailure(Backend backend, @TempDir Path tmp) throws Exception {
        FailOnce.reset(true);
        StreamExecutionEnvironment env = BloomDedupITCase.env(backend);
        env.enableCheckpointing(100);
        env.getConfig().setAutoWatermarkInterval(20);
        DataGeneratorSource<String> source =
                new DataGeneratorSource<>(
                        i -> STREAM.get(i.intValue()),
                        EVENTS,
                        RateLimiterStrategy.perSecond(5_000),
                        Types.STRING);
        DataStream<String> events =
                env.fromSource(
                                source,
                                WatermarkStrategy.<String>forGenerator(c -> new ClockWatermarks())
                                        .withTimestampAssigner(
                                                (e, previous) -> {
                                                    Long t = timestamp(e);
                                                    return t == null ? Long.MIN_VALUE : t;
                                                }),
                                "events")
                        .setParallelism(1);
        SingleOutputStreamOperator<String> firsts =
                BloomDedup.perKey(
                        events.keyBy(DedupModelITCase::key),
                        IdSelector.ofString(DedupModelITCase::id),
                        CONFIG);
        sink(firsts.map(new FailOnce<String>(300)).returns(Types.STRING), tmp, "main");
        sink(firsts.getSideOutput(BloomDedup.duplicatesTag(Types.STRING)), tmp, "duplicates");
        sink(firsts.getSideOutput(BloomDedup.lateTag(Types.STRING)), tmp, "late");
        sink(firsts.getSideOutput(BloomDedup.rejectedTag(Types.STRING)), tmp, "rejected");
        env.execute("dedup-model-" + backend);
        assertThat(FailOnce.FAILED.get()).as("the failure was injected").isTrue();

        Map<Integer, Outcome> outcome = new HashMap<>();
        read(tmp, "main", Outcome.PASSED, outcome);
        read(tmp, "duplicates", Outcome.DUPLICATE, outcome);
        read(tmp, "late", Outcome.LATE, outcome);
        read(tmp, "rejected", Outcome.REJECTED, outcome);
        assertThat(outcome).as("every event on exactly one output").hasSize(EVENTS);

        DedupModel model = new DedupModel(CONFIG);
        long maxClock = Long.MIN_VALUE + OUT_OF_ORDERNESS + 1;
        long lates = 0;
        long clearFirsts = 0;
        long falseDrops = 0;
        for (String e : STREAM) {
            int seq = Integer.parseInt(e.split(",", -1)[0]);
            Long t = timestamp(e);
            Outcome got = outcome.get(seq);
            // The largest watermark the source can have emitted before this event.
            long watermark = maxClock - OUT_OF_ORDERNESS - 1;
            maxClock = Math.max(maxClock, clock(e));
            if (got == Outcome.LATE) {
                lates++;
                assertThat(t).as("late %s", e).isNotNull();
                assertThat(t + CONFIG.allowedLateness().toMillis())
                        .as("late %s", e)
                        .isLessThanOrEqualTo(watermark);
                continue;
            }
            Expect expect = model.expect(key(e), id(e), t, 0);
            if (got == Outcome.REJECTED && expect == Expect.REJECTED) {
                continue;
            }
            assertThat(DedupModel.allowed(expect, got))
                    .as("%s: expected %s, got %s", e, expect, got)
                    .isTrue();
            if (expect == Expect.FIRST) {
                clearFirsts++;
                falseDrops += got == Outcome.DUPLICATE ? 1 : 0;
            }
            model.record(key(e), id(e), t, 0, got);
        }
        System.out.printf(
                "dedup model IT (%s): %d late, %d clear firsts, %d dropped as false positives%n",
                backend, lates, clearFirsts, falseDrops);
        assertThat(lates).as("the stream exercised lateness").isPositive();
        // Each clear first is dropped with at most fpp (2G - 1) / G: Poisson bound, 4.5 sigma.
        double mean = clearFirsts * model.falsePositiveBound();
        assertThat((double) falseDrops)
                .as("%d of %d clear firsts dropped", falseDrops, clearFirsts)
                .isLessThanOrEqualTo(mean + 4.5 * Math.sqrt(mean) + 3);
    }

    private static void sink(DataStream<String> stream, Path dir, String name) {
        stream.sinkTo(
                        FileSink.forRowFormat(
                                        new org.apache.flink.core.fs.Path(
                                                dir.resolve(name).toUri()),
                                        new SimpleStringEncoder<String>())
                                .build())
                .name(name)
                .uid(name);
    }

    private static void read(Path dir, String name, Outcome what, Map<Integer, Outcome> into)
            throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve(name));
        for (String line : BloomDedupITCase.readFinishedParts(dir.resolve(name))) {
            int seq = Integer.parseInt(line.split(",", -1)[0]);
            Outcome before = into.put(seq, what);
            assertThat(before).as("event %s on one output only", line).isNull();
        }
    }
}
