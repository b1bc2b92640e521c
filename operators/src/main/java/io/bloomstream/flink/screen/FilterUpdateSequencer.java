package io.bloomstream.flink.screen;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * The single producer of a screen's commands: {@link BloomScreen} puts it, at parallelism and
 * maximum parallelism 1, between the user's command stream and the broadcast. Flink keeps the order
 * of the records of one producer subtask on each channel, so every screening task then receives the
 * commands in the same order, whatever the parallelism of the command stream; with several
 * producers it does not (two tasks could end with different overlays). It
 *
 * <ul>
 *   <li>numbers the commands 1, 2, 3, ... ({@link FilterUpdate#sequence}; the counter is
 *       checkpointed), so a screen can reject a command that did not come through it;
 *   <li>fails at start if it runs with more than one subtask;
 *   <li>drops the watermarks and watermark statuses of the command stream and emits the final
 *       watermark once instead, so a command stream without watermarks (or an idle one) never holds
 *       back the event-time watermark that the screen passes on: commands have no event time.
 * </ul>
 */
@Internal
final class FilterUpdateSequencer extends AbstractStreamOperator<FilterUpdate>
        implements OneInputStreamOperator<FilterUpdate, FilterUpdate> {

    private static final long serialVersionUID = 1L;

    private static final ListStateDescriptor<Long> SEQUENCE =
            new ListStateDescriptor<>("bloom-screen-command-sequence", LongSerializer.INSTANCE);

    private transient ListState<Long> sequenceState;
    private transient long sequence;

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        sequenceState = context.getOperatorStateStore().getListState(SEQUENCE);
        sequence = 0;
        for (Long s : sequenceState.get()) {
            sequence = Math.max(sequence, s);
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        int subtasks = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        if (subtasks != 1) {
            throw new IllegalStateException(
                    "the screen's command sequencer must run as one subtask, runs as "
                            + subtasks
                            + ": every screening task would no longer see the same order");
        }
        // From the mailbox, once the task runs: commands have no event time.
        getProcessingTimeService()
                .registerTimer(
                        getProcessingTimeService().getCurrentProcessingTime(),
                        t -> output.emitWatermark(Watermark.MAX_WATERMARK));
    }

    @Override
    public void processElement(StreamRecord<FilterUpdate> element) {
        FilterUpdate in = element.getValue();
        if (in == null) {
            output.collect(element); // the screen counts it as an incomplete command
            return;
        }
        output.collect(element.replace(in.withSequence(++sequence)));
    }

    @Override
    public void processWatermark(Watermark mark) {
        // Dropped: see the class comment.
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus status) {
        // Dropped: an idle or active command stream says nothing about event time.
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        sequenceState.update(java.util.List.of(sequence));
    }
}
