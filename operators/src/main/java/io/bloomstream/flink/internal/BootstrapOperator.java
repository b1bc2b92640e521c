package io.bloomstream.flink.internal;

import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.state.api.SavepointWriterOperatorFactory;
import org.apache.flink.state.api.output.SnapshotUtils;
import org.apache.flink.state.api.output.TaggedOperatorSubtaskState;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.operators.StreamTaskStateInitializer;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.StreamTask;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.OutputTag;

/**
 * Runs a real stream operator over a bounded input inside the State Processor API's bootstrap task
 * and, at the end of the input, snapshots it into the savepoint being written: the state is then
 * written by the very code that restores it, where a {@code KeyedStateBootstrapFunction} could
 * write only what a runtime context reaches (no namespaced state, no operator state of the
 * operator's own function). Modelled on Flink's {@code StateBootstrapWrapperOperator}, which takes
 * window operators only.
 *
 * <p>What the operator emits (main and side outputs) is discarded. Watermarks are not passed on: a
 * bounded input ends with the final watermark, which would fire every event-time timer and leave a
 * watermark that makes every later event late; the operator sees none, as a job that has read no
 * timestamps yet. Processing time is the wall clock (the bootstrap task fires no timer of it).
 *
 * @param <IN> the input type
 */
@Internal
public final class BootstrapOperator<IN>
        implements OneInputStreamOperator<IN, TaggedOperatorSubtaskState>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /**
     * The checkpoint id of the snapshot: that of {@code SavepointWriter.newSavepoint} (its metadata
     * and Flink's own bootstrap operators use it too).
     */
    static final long CHECKPOINT_ID = 0L;

    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(BootstrapOperator.class);

    /** The first failure of the wrapped operator, after which the input is dropped. */
    private transient Throwable failure;

    private final OneInputStreamOperator<IN, ?> operator;
    private final transient StreamTask<?, ?> task;
    private final long timestamp;
    private final Path savepointPath;
    private final transient Output<StreamRecord<TaggedOperatorSubtaskState>> output;

    private BootstrapOperator(
            OneInputStreamOperator<IN, ?> operator,
            StreamTask<?, ?> task,
            long timestamp,
            Path savepointPath,
            Output<StreamRecord<TaggedOperatorSubtaskState>> output) {
        this.operator = operator;
        this.task = task;
        this.timestamp = timestamp;
        this.savepointPath = savepointPath;
        this.output = output;
    }

    /**
     * The factory a {@code KeyedStateTransformation.transform} takes: each bootstrap subtask runs a
     * copy of {@code operator} (set up with the subtask's config, its keyed state backend and key
     * selector those of the transformation) and writes its snapshot.
     *
     * @param operator an operator that was not set up (as a job's graph holds it)
     */
    public static <IN, OP extends AbstractStreamOperator<?> & OneInputStreamOperator<IN, ?>>
            SavepointWriterOperatorFactory factory(OP operator) {
        Objects.requireNonNull(operator, "operator");
        return (timestamp, path) -> new Factory<>(operator, timestamp, path);
    }

    /** Done in {@link #processElement}, so that its failure is kept there too. */
    @Override
    public void setKeyContextElement1(StreamRecord<?> record) {}

    @Override
    public void setKeyContextElement2(StreamRecord<?> record) throws Exception {
        operator.setKeyContextElement2(record);
    }

    /**
     * Judges the element; after a failure, drops the rest of the input and fails at its end ({@link
     * #endInput}). Flink's bootstrap runner feeds this operator's thread through a queue of 16 and
     * swallows that thread's failure: a failure thrown here would end the thread, fill the queue
     * and leave the job's input task waiting on it for ever.
     */
    @Override
    public void processElement(StreamRecord<IN> element) throws Exception {
        if (failure != null) {
            return;
        }
        try {
            operator.setKeyContextElement1(element);
            operator.processElement(element);
        } catch (Exception | Error e) {
            failure = e;
            LOG.error("bootstrap failed; the rest of the input is dropped", e);
        }
    }

    /** Not passed on (see the class comment). */
    @Override
    public void processWatermark(Watermark mark) {}

    /** Not passed on (see the class comment). */
    @Override
    public void processWatermark(WatermarkEvent watermark) {}

    @Override
    public void processWatermarkStatus(WatermarkStatus status) throws Exception {
        operator.processWatermarkStatus(status);
    }

    @Override
    public void processLatencyMarker(LatencyMarker marker) throws Exception {
        operator.processLatencyMarker(marker);
    }

    @Override
    public void processRecordAttributes(RecordAttributes attributes) throws Exception {
        operator.processRecordAttributes(attributes);
    }

    @Override
    public void initializeState(StreamTaskStateInitializer initializer) throws Exception {
        operator.initializeState(initializer);
    }

    @Override
    public void open() throws Exception {
        operator.open();
    }

    /**
     * Snapshots the operator into the savepoint and emits its state: Flink's {@code SnapshotUtils}
     * calls {@link #prepareSnapshotPreBarrier} and {@link #snapshotState}, as a checkpoint would.
     */
    @Override
    public void endInput() throws Exception {
        if (failure != null) {
            throw new IllegalStateException("bootstrap failed: " + failure, failure);
        }
        var conf = task.getJobConfiguration();
        TaggedOperatorSubtaskState state =
                SnapshotUtils.snapshot(
                        CHECKPOINT_ID,
                        this,
                        task.getEnvironment().getTaskInfo().getIndexOfThisSubtask(),
                        timestamp,
                        org.apache.flink.configuration.CheckpointingOptions.getCheckpointingMode(
                                conf),
                        org.apache.flink.configuration.CheckpointingOptions
                                .isUnalignedCheckpointEnabled(conf),
                        task.getConfiguration().getConfiguration(),
                        savepointPath);
        output.collect(new StreamRecord<>(state));
    }

    @Override
    public void finish() throws Exception {
        operator.finish();
    }

    @Override
    public void close() throws Exception {
        operator.close();
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        operator.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public OperatorSnapshotFutures snapshotState(
            long checkpointId,
            long timestamp,
            CheckpointOptions options,
            CheckpointStreamFactory storage)
            throws Exception {
        return operator.snapshotState(checkpointId, timestamp, options, storage);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        operator.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        operator.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public OperatorMetricGroup getMetricGroup() {
        return operator.getMetricGroup();
    }

    @Override
    public OperatorID getOperatorID() {
        return operator.getOperatorID();
    }

    @Override
    public void setCurrentKey(Object key) {
        operator.setCurrentKey(key);
    }

    @Override
    public Object getCurrentKey() {
        return operator.getCurrentKey();
    }

    /** Sets up the wrapped operator with an output that discards, and wraps it. */
    private static final class Factory<IN>
            extends AbstractStreamOperatorFactory<TaggedOperatorSubtaskState>
            implements OneInputStreamOperatorFactory<IN, TaggedOperatorSubtaskState> {

        private static final long serialVersionUID = 1L;

        private final AbstractStreamOperator<?> operator;
        private final long timestamp;
        private final Path savepointPath;

        Factory(AbstractStreamOperator<?> operator, long timestamp, Path savepointPath) {
            this.operator = operator;
            this.timestamp = timestamp;
            this.savepointPath = savepointPath;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public <T extends StreamOperator<TaggedOperatorSubtaskState>> T createStreamOperator(
                StreamOperatorParameters<TaggedOperatorSubtaskState> parameters) {
            // Flink's own factory sets the operator up (AbstractStreamOperator.setup is protected)
            StreamOperatorParameters inner =
                    new StreamOperatorParameters<>(
                            parameters.getContainingTask(),
                            parameters.getStreamConfig(),
                            new Discard<>(),
                            parameters::getProcessingTimeService,
                            parameters.getOperatorEventDispatcher(),
                            parameters.getMailboxExecutor());
            StreamOperator<?> made = SimpleOperatorFactory.of(operator).createStreamOperator(inner);
            return (T)
                    new BootstrapOperator<>(
                            (OneInputStreamOperator<IN, ?>) made,
                            parameters.getContainingTask(),
                            timestamp,
                            savepointPath,
                            parameters.getOutput());
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return BootstrapOperator.class;
        }
    }

    /** The wrapped operator's output: everything it emits is dropped. */
    private static final class Discard<T> implements Output<T> {
        @Override
        public void emitWatermark(Watermark mark) {}

        @Override
        public void emitWatermark(WatermarkEvent watermark) {}

        @Override
        public void emitWatermarkStatus(WatermarkStatus status) {}

        @Override
        public <X> void collect(OutputTag<X> tag, StreamRecord<X> record) {}

        @Override
        public void emitLatencyMarker(LatencyMarker marker) {}

        @Override
        public void emitRecordAttributes(RecordAttributes attributes) {}

        @Override
        public void collect(T record) {}

        @Override
        public void close() {}
    }
}
