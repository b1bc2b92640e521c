package io.bloomstream.jobs.io;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A bounded source that does not end: each reader, at the end of its input, reports it to {@link
 * InputProgress#readerAtEnd} and then waits instead of finishing. The job then keeps running with
 * all its state, so that the command can stop it with a savepoint ({@code --state-dir}); a job
 * whose sources finish ends without a state to resume from (its last checkpoint is discarded, and
 * would restore its operators as finished). When a reader reports the end, every record it read has
 * been emitted, so a savepoint taken after every reader reported holds the whole input.
 *
 * <p>No final watermark is emitted either: event-time timers that wait for later events (a
 * retention, a window) stay pending for the next run, as they would in an unbounded stream.
 */
public final class HoldAtEnd<T, S extends SourceSplit, E> implements Source<T, S, E> {

    private static final long serialVersionUID = 1L;

    private final Source<T, S, E> source;
    private final String runId;

    /** Wraps {@code source}; its readers report to {@link InputProgress#of} {@code runId}. */
    public HoldAtEnd(Source<T, S, E> source, String runId) {
        this.source = source;
        this.runId = runId;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SplitEnumerator<S, E> createEnumerator(SplitEnumeratorContext<S> context)
            throws Exception {
        return source.createEnumerator(context);
    }

    @Override
    public SplitEnumerator<S, E> restoreEnumerator(SplitEnumeratorContext<S> context, E checkpoint)
            throws Exception {
        return source.restoreEnumerator(context, checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<S> getSplitSerializer() {
        return source.getSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<E> getEnumeratorCheckpointSerializer() {
        return source.getEnumeratorCheckpointSerializer();
    }

    @Override
    public SourceReader<T, S> createReader(SourceReaderContext context) throws Exception {
        return new Reader<>(
                source.createReader(context),
                InputProgress.of(runId),
                context.getIndexOfSubtask(),
                context.currentParallelism());
    }

    /** Delegates to the source's reader until its end, then waits. */
    private static final class Reader<T, S extends SourceSplit> implements SourceReader<T, S> {
        private final SourceReader<T, S> reader;
        private final InputProgress progress;
        private final int subtask;
        private final int parallelism;
        private final CompletableFuture<Void> never = new CompletableFuture<>();
        private boolean atEnd;

        Reader(SourceReader<T, S> reader, InputProgress progress, int subtask, int parallelism) {
            this.reader = reader;
            this.progress = progress;
            this.subtask = subtask;
            this.parallelism = parallelism;
        }

        @Override
        public void start() {
            reader.start();
        }

        @Override
        public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
            if (atEnd) {
                return InputStatus.NOTHING_AVAILABLE;
            }
            InputStatus status = reader.pollNext(output);
            if (status == InputStatus.END_OF_INPUT) {
                atEnd = true;
                if (progress != null) {
                    progress.readerAtEnd(subtask, parallelism);
                }
                return InputStatus.NOTHING_AVAILABLE;
            }
            return status;
        }

        @Override
        public List<S> snapshotState(long checkpointId) {
            return reader.snapshotState(checkpointId);
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return atEnd ? never : reader.isAvailable();
        }

        @Override
        public void addSplits(List<S> splits) {
            reader.addSplits(splits);
        }

        @Override
        public void notifyNoMoreSplits() {
            reader.notifyNoMoreSplits();
        }

        @Override
        public void handleSourceEvents(SourceEvent event) {
            reader.handleSourceEvents(event);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            reader.notifyCheckpointComplete(checkpointId);
        }

        @Override
        public void notifyCheckpointAborted(long checkpointId) throws Exception {
            reader.notifyCheckpointAborted(checkpointId);
        }

        @Override
        public void pauseOrResumeSplits(
                Collection<String> splitsToPause, Collection<String> splitsToResume) {
            reader.pauseOrResumeSplits(splitsToPause, splitsToResume);
        }

        @Override
        public void close() throws Exception {
            reader.close();
        }
    }
}
