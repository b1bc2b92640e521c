package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.dedup.BloomDedupITCase;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mini-cluster test of {@link BloomScreen} at parallelism 2: live adds and removes arrive
 * mid-stream, the job is killed once a checkpoint that holds them has completed, and after the
 * restart from that checkpoint the updates still hold, though the command source does not replay
 * them.
 *
 * <p>Events are "seq|from". By seq: every 10th (+0) is a sender listed in the file and never
 * updated; +1 a sender added live; +2 a listed sender removed live; seq % 100 == 3 has no sender;
 * the rest are unlisted probes, each unique. Each event also records whether every screening task
 * had applied every command when the event was generated ("after updates").
 */
class BloomScreenITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int LISTED = 2_000;
    private static final int UPDATED = 10; // added and removed entries each
    private static final int PARALLELISM = 2;
    private static final int COMMANDS = 2 * UPDATED;
    private static final long EVENTS = 60_000;
    private static final double FPP = 0.01;

    static final AtomicInteger APPLIED = new AtomicInteger();
    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final AtomicLong FAILED_AT = new AtomicLong(-1);

    /** Per subtask, the first checkpoint it snapshotted with every command applied. */
    static final Map<Integer, Long> FULL_SNAPSHOT = new java.util.concurrent.ConcurrentHashMap<>();

    static final AtomicBoolean FULL_CHECKPOINT_DONE = new AtomicBoolean();

    static String listed(long i) {
        return "Spammer" + (i % LISTED) + "@Bad.Example";
    }

    static String added(long i) {
        return "newcomer" + (i % UPDATED) + "@spam.example";
    }

    static String removed(long i) {
        return listed(LISTED - 1 - (i % UPDATED)); // listed in the file, then removed
    }

    static boolean allApplied() {
        return APPLIED.get() >= COMMANDS * PARALLELISM;
    }

    static String event(long seq) {
        String from;
        if (seq % 100 == 3) {
            from = "";
        } else if (seq % 10 == 0) {
            from = listed(seq / 10 % (LISTED - UPDATED)); // never one of the removed
        } else if (seq % 10 == 1) {
            from = added(seq / 10);
        } else if (seq % 10 == 2) {
            from = removed(seq / 10);
        } else {
            from = "user" + seq + "@good.example";
        }
        return seq + "|" + from + "|" + (allApplied() ? 1 : 0);
    }

    static FilterUpdate command(long i) {
        return i % 2 == 0 ? FilterUpdate.add(added(i / 2)) : FilterUpdate.remove(removed(i / 2));
    }

    /** Counts commands taking effect, and notes checkpoints that hold all of them. */
    static final class CountingScreen extends ScreenFunction<String> {
        private static final long serialVersionUID = 1L;
        private transient int appliedHere;

        CountingScreen(ScreenConfig<String> config) {
            super(
                    config,
                    BloomScreen.flaggedTag(Types.STRING),
                    BloomScreen.rejectedTag(Types.STRING));
        }

        @Override
        protected void commandApplied(FilterUpdate command) {
            appliedHere++;
            APPLIED.incrementAndGet();
        }

        @Override
        public void snapshotState(org.apache.flink.runtime.state.FunctionSnapshotContext context) {
            super.snapshotState(context);
            if (appliedHere == COMMANDS) {
                FULL_SNAPSHOT.putIfAbsent(
                        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                        context.getCheckpointId());
            }
        }
    }

    /** Throws once, after a checkpoint in which every task held every command completed. */
    static final class FailAfterUpdatesCheckpointed
            implements MapFunction<String, String>, CheckpointListener {
        private static final long serialVersionUID = 1L;

        @Override
        public String map(String value) {
            if (FULL_CHECKPOINT_DONE.get() && FAILED.compareAndSet(false, true)) {
                FAILED_AT.set(Long.parseLong(value.split("\\|")[0]));
                throw new IllegalStateException("injected failure");
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (FULL_SNAPSHOT.size() == PARALLELISM
                    && checkpointId >= java.util.Collections.max(FULL_SNAPSHOT.values())) {
                FULL_CHECKPOINT_DONE.set(true);
            }
        }
    }

    @Test
    void liveUpdatesApplyMidStreamAndSurviveARestartFromCheckpoint(@TempDir Path tmp)
            throws Exception {
        BloomFilter filter = BloomFilter.create(FilterSpec.forItems(LISTED, FPP));
        for (int i = 0; i < LISTED; i++) {
            filter.add(Normalization.EMAIL.apply(listed(i)));
        }
        Path filterFile = tmp.resolve("spam.bloom");
        Files.write(filterFile, FilterCodec.encode(filter, Normalization.EMAIL));

        Configuration conf = Backend.HEAP.jobConfig();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(PARALLELISM);
        env.enableCheckpointing(100);

        DataStream<String> events =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        BloomScreenITCase::event,
                                        EVENTS,
                                        RateLimiterStrategy.perSecond(20_000),
                                        Types.STRING),
                                WatermarkStrategy.noWatermarks(),
                                "events")
                        .setParallelism(1);
        DataStream<FilterUpdate> commands =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        BloomScreenITCase::command,
                                        COMMANDS,
                                        RateLimiterStrategy.perSecond(40),
                                        BloomScreen.commandType()),
                                WatermarkStrategy.noWatermarks(),
                                "commands")
                        .setParallelism(1);
        ScreenConfig<String> config =
                ScreenConfig.<String>builder()
                        .filterPath(filterFile.toUri().toString())
                        .normalization(Normalization.EMAIL)
                        .field("from", e -> e.split("\\|", -1)[1])
                        .build();
        SingleOutputStreamOperator<String> clean =
                BloomScreen.apply(events, commands, new CountingScreen(config), config.uidPrefix());
        clean.map(new FailAfterUpdatesCheckpointed())
                .returns(Types.STRING)
                .sinkTo(sink(tmp, "clean"));
        clean.getSideOutput(BloomScreen.flaggedTag(Types.STRING))
                .map(m -> m.event + "|" + m.field)
                .returns(Types.STRING)
                .sinkTo(sink(tmp, "flagged"));
        clean.getSideOutput(BloomScreen.rejectedTag(Types.STRING)).sinkTo(sink(tmp, "rejected"));
        env.execute("screen-it");

        assertThat(FAILED.get()).as("the failure was injected").isTrue();
        assertThat(APPLIED.get())
                .as("commands applied once per task: restored from state, not replayed")
                .isEqualTo(COMMANDS * PARALLELISM);

        Map<Long, String> outcome = new HashMap<>();
        Map<Long, Boolean> afterUpdates = new HashMap<>();
        for (String[] out :
                new String[][] {
                    {"clean", "clean"}, {"flagged", "flagged"}, {"rejected", "rejected"}
                }) {
            for (String line : BloomDedupITCase.readFinishedParts(tmp.resolve(out[0]))) {
                String[] f = line.split("\\|", -1);
                long seq = Long.parseLong(f[0]);
                assertThat(outcome.put(seq, out[1])).as("event %d written once", seq).isNull();
                afterUpdates.put(seq, f[2].equals("1"));
                if (out[0].equals("flagged")) {
                    assertThat(f[3]).isEqualTo("from");
                }
            }
        }
        assertThat(outcome).as("every event written exactly once").hasSize((int) EVENTS);

        long probes = 0;
        long probesFlagged = 0;
        long addedAfterFailure = 0;
        for (long seq = 0; seq < EVENTS; seq++) {
            String o = outcome.get(seq);
            boolean after = afterUpdates.get(seq);
            if (seq % 100 == 3) {
                assertThat(o).as("event %d has no sender", seq).isEqualTo("rejected");
            } else if (seq % 10 == 0) {
                assertThat(o).as("listed sender of %d", seq).isEqualTo("flagged");
            } else if (seq % 10 == 1 && after) {
                assertThat(o).as("added sender of %d", seq).isEqualTo("flagged");
                if (seq > FAILED_AT.get()) {
                    addedAfterFailure++;
                }
            } else if (seq % 10 == 2 && after) {
                assertThat(o).as("removed sender of %d", seq).isEqualTo("clean");
            } else if (seq % 10 > 2) {
                probes++;
                probesFlagged += o.equals("flagged") ? 1 : 0;
            }
        }
        assertThat(addedAfterFailure)
                .as("updates checked on events screened after the restart")
                .isGreaterThan(100);
        double p = filter.expectedFpp();
        double bound = probes * p + 4.5 * Math.sqrt(probes * p * (1 - p));
        assertThat((double) probesFlagged)
                .as("%d of %d unlisted senders flagged", probesFlagged, probes)
                .isLessThanOrEqualTo(bound);
    }

    private static FileSink<String> sink(Path tmp, String name) {
        return FileSink.forRowFormat(
                        new org.apache.flink.core.fs.Path(tmp.resolve(name).toUri()),
                        new SimpleStringEncoder<String>())
                .build();
    }
}
