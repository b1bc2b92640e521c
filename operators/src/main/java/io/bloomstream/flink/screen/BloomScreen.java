package io.bloomstream.flink.screen;

import io.bloomstream.flink.internal.OperatorUids;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Screens events against a prebuilt filter file (for example of spam sender addresses built with
 * the {@code build-filter} tool), updatable while the job runs.
 *
 * <pre>{@code
 * ScreenConfig<Mail> config = ScreenConfig.<Mail>builder()
 *         .filterPath("s3://lists/spam-senders.bloom")
 *         .normalization(Normalization.EMAIL)
 *         .field("from", Mail::from)
 *         .field("replyTo", Mail::replyTo)
 *         .build();
 * SingleOutputStreamOperator<Mail> clean = BloomScreen.screen(mails, commands, config);
 * DataStream<ScreenMatch<Mail>> spam = clean.getSideOutput(BloomScreen.flaggedTag(mails.getType()));
 * DataStream<Mail> incomplete = clean.getSideOutput(BloomScreen.rejectedTag(mails.getType()));
 * }</pre>
 *
 * <p>The filter is loaded in {@code open()}, decoded as the file streams, once per TaskManager: its
 * tasks share one copy (keyed by path and checksum). A missing, truncated or corrupt file, or one
 * built with another hash or normalization, fails the job at start with a message naming the file
 * and the problem. A restore that finds a different file (another CRC32C) at the path of the
 * version in force fails the same way rather than screen with other contents. A listed entry is
 * always flagged; an unlisted one is flagged with at most the file's false-positive rate.
 *
 * <p>Live updates arrive as {@link FilterUpdate}s, broadcast to every task and kept in broadcast
 * state, so they survive failover. Adds and removes go to an exact overlay consulted before the
 * filter: a remove unflags exactly its entry and can never unflag another listed entry (which a
 * counting filter's decrement could, for an entry that was never added). A load command swaps in a
 * new file version atomically and clears the overlay; a bad file is rejected (metric {@link
 * ScreenMetrics#LOAD_ERRORS}) and the old version stays in force. So is a file that cannot be read
 * for a reason a retry cannot fix (missing, a path without a file system, permission denied); any
 * other read error fails the task, and the restart replays the command.
 *
 * <p>Order: as a load clears the overlay and adds and removes are last-write-wins, every task must
 * apply the commands in one order. Flink keeps the order of one producer subtask's records, not of
 * several, so the commands pass through a single subtask (parallelism and maximum parallelism 1,
 * uid {@code PREFIX-commands}) that numbers them ({@link FilterUpdate#sequence}) before the
 * broadcast; a screen rejects a command it did not number. Commands of different source subtasks
 * (Kafka partitions, say) are applied in the order they reach that subtask: send two commands whose
 * order matters from one source subtask. Identical state in every task assumes exactly-once
 * checkpoints (the default); at-least-once replays may apply commands twice in some tasks.
 *
 * <p>Watermarks: commands carry no event time. Their watermarks are dropped and the command input
 * of the screen is at the final watermark from the start, so the screen forwards the events'
 * watermark as it is, and an unbounded command stream without watermarks does not hold back
 * event-time windows downstream.
 *
 * <p>The operator has uid and name {@link ScreenConfig#uidPrefix()}, default {@value #DEFAULT_UID};
 * without a command stream, the command-less source and its flatMap are named with the prefix and
 * {@code -no-commands} and {@code -no-commands-flat} (for the default prefix, as in earlier
 * releases, {@code no-screen-commands} and {@code no-screen-commands-flat}); the command sequencer
 * is {@code PREFIX-commands} (since 0.3). Give each screen of a job its own prefix.
 */
@PublicEvolving
public final class BloomScreen {

    /** The default operator uid and name (see {@link ScreenConfig.Builder#uidPrefix}). */
    public static final String DEFAULT_UID = "bloom-screen";

    /** The uid of the command-less source under {@link #DEFAULT_UID} (kept for savepoints). */
    private static final String DEFAULT_NO_COMMANDS_UID = "no-screen-commands";

    private static final String FLAGGED_ID = "bloom-screen-flagged";
    private static final String REJECTED_ID = "bloom-screen-rejected";

    private BloomScreen() {}

    /** The side output of flagged events. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <T> OutputTag<ScreenMatch<T>> flaggedTag(TypeInformation<T> type) {
        Map<String, TypeInformation<?>> fields =
                Map.of("event", type, "field", Types.STRING, "value", Types.STRING);
        TypeInformation<ScreenMatch<T>> info =
                (TypeInformation) Types.POJO(ScreenMatch.class, fields);
        return new OutputTag<>(FLAGGED_ID, info);
    }

    /** The side output of events with a screened field missing or unusable. */
    public static <T> OutputTag<T> rejectedTag(TypeInformation<T> type) {
        return new OutputTag<>(REJECTED_ID, type);
    }

    /** The type information of commands. */
    public static TypeInformation<FilterUpdate> commandType() {
        return Types.POJO(FilterUpdate.class);
    }

    /** Screens {@code events} against the file of {@code config}, without live updates. */
    public static <T> SingleOutputStreamOperator<T> screen(
            DataStream<T> events, ScreenConfig<T> config) {
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(config, "config");
        return screen(
                events, noCommands(events.getExecutionEnvironment(), config.uidPrefix()), config);
    }

    /** {@link #noCommands(StreamExecutionEnvironment, String)} under {@link #DEFAULT_UID}. */
    public static SingleOutputStreamOperator<FilterUpdate> noCommands(
            StreamExecutionEnvironment env) {
        return noCommands(env, DEFAULT_UID);
    }

    /**
     * A bounded stream without commands, for the screen with {@code uidPrefix}: its two operators
     * have uids and names {@code uidPrefix-no-commands} and {@code uidPrefix-no-commands-flat}
     * ({@code no-screen-commands} and {@code no-screen-commands-flat} under {@link #DEFAULT_UID}).
     * (Flink 2.2's {@code fromData} of an empty collection fails at run time, so this filters out a
     * one-element sequence.)
     *
     * @throws IllegalArgumentException if {@code uidPrefix} is blank
     */
    public static SingleOutputStreamOperator<FilterUpdate> noCommands(
            StreamExecutionEnvironment env, String uidPrefix) {
        String uid = noCommandsUid(OperatorUids.checkPrefix(uidPrefix));
        return env.fromSequence(0, 0)
                .name(uid)
                .uid(uid)
                .flatMap((Long ignored, Collector<FilterUpdate> out) -> {})
                .returns(commandType())
                .name(uid + "-flat")
                .uid(uid + "-flat");
    }

    static String noCommandsUid(String uidPrefix) {
        return uidPrefix.equals(DEFAULT_UID) ? DEFAULT_NO_COMMANDS_UID : uidPrefix + "-no-commands";
    }

    /** The uid and name of the single producer of the screen's commands. */
    static String sequencerUid(String uidPrefix) {
        return uidPrefix + "-commands";
    }

    /**
     * Screens {@code events}, applying the live updates of {@code commands}. The commands may come
     * from any number of subtasks: they pass through one subtask ({@code uidPrefix-commands}) that
     * numbers them, and every task applies them in that order. Their watermarks are dropped (a
     * command stream without watermarks does not hold back the events' watermark).
     */
    public static <T> SingleOutputStreamOperator<T> screen(
            DataStream<T> events, DataStream<FilterUpdate> commands, ScreenConfig<T> config) {
        Objects.requireNonNull(events, "events");
        return apply(
                events,
                commands,
                new ScreenFunction<>(
                        config, flaggedTag(events.getType()), rejectedTag(events.getType())),
                config.uidPrefix());
    }

    static <T> SingleOutputStreamOperator<T> apply(
            DataStream<T> events,
            DataStream<FilterUpdate> commands,
            ScreenFunction<T> function,
            String uidPrefix) {
        Objects.requireNonNull(commands, "commands");
        String sequencerUid = sequencerUid(uidPrefix);
        SingleOutputStreamOperator<FilterUpdate> ordered =
                commands.transform(sequencerUid, commandType(), new FilterUpdateSequencer())
                        .uid(sequencerUid)
                        .setParallelism(1)
                        .setMaxParallelism(1);
        return events.connect(
                        ordered.broadcast(
                                ScreenFunction.OVERLAY_STATE, ScreenFunction.FILTER_STATE))
                .process(function, events.getType())
                .name(uidPrefix)
                .uid(uidPrefix);
    }
}
