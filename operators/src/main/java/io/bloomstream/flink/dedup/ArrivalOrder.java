package io.bloomstream.flink.dedup;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.OutputTag;

/**
 * The dedup operator's output in global mode with bundles: a bundle is judged grouped by shard, and
 * what the judging emits (main and side outputs) is held here, by the arrival index of the event
 * that emitted it, then let out in arrival order: the outputs leave as if the events had been
 * judged one at a time. Outside a bundle's judging everything passes straight through.
 *
 * <p>Records are held as value and timestamp (the operator's collector reuses one record object).
 * The dedup function emits at most one record per event; a further one is held too, after it.
 *
 * @param <T> the output type
 */
final class ArrivalOrder<T> implements Output<StreamRecord<T>> {

    private static final byte NONE = 0;
    private static final byte PLAIN = 1;
    private static final byte TIMED = 2;

    private final Output<StreamRecord<T>> out;
    private final Object[] values;
    private final long[] times;
    private final byte[] kinds;
    private final OutputTag<?>[] tags;

    /** Further records of one event: {index, tag, held record}; empty for the dedup function. */
    private final List<Object[]> more = new ArrayList<>();

    private final StreamRecord<Object> reuse = new StreamRecord<>(null);

    /** The arrival index of the event being judged, or -1: records pass straight through. */
    private int current = -1;

    ArrivalOrder(Output<StreamRecord<T>> out, int bundleSize) {
        this.out = out;
        this.values = new Object[bundleSize];
        this.times = new long[bundleSize];
        this.kinds = new byte[bundleSize];
        this.tags = new OutputTag<?>[bundleSize];
    }

    /** What is emitted from now on belongs to the event that arrived at {@code index}. */
    void judging(int index) {
        current = index;
    }

    /** Lets out what the first {@code n} events emitted, in their arrival order; then passes. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void release(int n) {
        current = -1;
        for (int i = 0; i < n; i++) {
            if (kinds[i] != NONE) {
                emit(tags[i], values[i], kinds[i] == TIMED, times[i]);
                kinds[i] = NONE;
                values[i] = null;
                tags[i] = null;
            }
            if (!more.isEmpty()) {
                for (Object[] m : more) {
                    if ((Integer) m[0] == i) {
                        StreamRecord<?> r = (StreamRecord<?>) m[2];
                        emit((OutputTag) m[1], r.getValue(), r.hasTimestamp(), r.getTimestamp());
                    }
                }
            }
        }
        more.clear();
    }

    /** Drops what is held (the bundle's judging failed: the task fails with it). */
    void discard(int n) {
        current = -1;
        for (int i = 0; i < n; i++) {
            kinds[i] = NONE;
            values[i] = null;
            tags[i] = null;
        }
        more.clear();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void emit(OutputTag tag, Object value, boolean timed, long time) {
        if (tag == null) {
            reuse.replace(value);
            if (timed) {
                reuse.setTimestamp(time);
            } else {
                reuse.eraseTimestamp();
            }
            out.collect((StreamRecord<T>) (StreamRecord) reuse);
        } else {
            out.collect(tag, timed ? new StreamRecord<>(value, time) : new StreamRecord<>(value));
        }
    }

    private void hold(OutputTag<?> tag, StreamRecord<?> record) {
        int i = current;
        if (kinds[i] != NONE) {
            StreamRecord<?> copy =
                    record.hasTimestamp()
                            ? new StreamRecord<>(record.getValue(), record.getTimestamp())
                            : new StreamRecord<>(record.getValue());
            more.add(new Object[] {i, tag, copy});
            return;
        }
        values[i] = record.getValue();
        tags[i] = tag;
        kinds[i] = record.hasTimestamp() ? TIMED : PLAIN;
        times[i] = record.getTimestamp();
    }

    @Override
    public void collect(StreamRecord<T> record) {
        if (current < 0) {
            out.collect(record);
        } else {
            hold(null, record);
        }
    }

    @Override
    public <X> void collect(OutputTag<X> outputTag, StreamRecord<X> record) {
        if (current < 0) {
            out.collect(outputTag, record);
        } else {
            hold(outputTag, record);
        }
    }

    @Override
    public void emitWatermark(Watermark mark) {
        out.emitWatermark(mark);
    }

    @Override
    public void emitWatermarkStatus(WatermarkStatus watermarkStatus) {
        out.emitWatermarkStatus(watermarkStatus);
    }

    @Override
    public void emitLatencyMarker(LatencyMarker latencyMarker) {
        out.emitLatencyMarker(latencyMarker);
    }

    @Override
    public void emitRecordAttributes(RecordAttributes recordAttributes) {
        out.emitRecordAttributes(recordAttributes);
    }

    @Override
    public void emitWatermark(WatermarkEvent watermark) {
        out.emitWatermark(watermark);
    }

    @Override
    public void close() {
        out.close();
    }
}
