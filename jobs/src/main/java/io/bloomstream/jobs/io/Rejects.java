package io.bloomstream.jobs.io;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses lines, sending records that cannot be used to the rejected side output as JSON ({@code
 * reason}, {@code record}) and counting them (metric {@value #METRIC}, accumulators {@link
 * Tally#REJECTED} and {@link RejectReasons}). When the first {@value RejectReasons.First#RECORDS}
 * records of a parser are all rejected for the same missing field, the job fails for good (a
 * mistyped field flag would otherwise reject a whole stream). The counts are kept in checkpoints
 * ({@link RunCounts}): a run that recovers its input from a killed run's checkpoint counts on from
 * there.
 */
public final class Rejects extends ProcessFunction<String, Parsed> implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** Counter of records rejected while parsing. */
    public static final String METRIC = "bloomParseRejected";

    /** The side output of rejected records, one JSON object each. */
    public static final OutputTag<String> TAG = new OutputTag<>("rejected", Types.STRING);

    private static final JsonFactory JSON = new JsonFactory();

    /** The prefix of a reason's count in {@link RunCounts}. */
    private static final String REASON = "reason:";

    /** One of the two is set: most commands parse the line alone. */
    private final LineParser.RecordParser parser;

    private final LineParser.TimedRecordParser timedParser;

    private final RunCounts counts = new RunCounts(Tally.IN, Tally.REJECTED);

    private transient Counter rejected;
    private transient LongCounter in;
    private transient LongCounter out;
    private transient RejectReasons reasons;
    private transient RejectReasons.First first;

    /** Parses with {@code parser}; if {@code complete}, every field is required. */
    public Rejects(LineParser parser, boolean complete) {
        this(complete ? parser::parseComplete : parser::parse);
    }

    /** Parses with {@code parser}. */
    public Rejects(LineParser.RecordParser parser) {
        this.parser = parser;
        this.timedParser = null;
    }

    /** Parses with {@code parser}, which also sees each record's assigned timestamp. */
    public Rejects(LineParser.TimedRecordParser parser) {
        this.parser = null;
        this.timedParser = parser;
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) throws Exception {
        counts.initialize(ctx, getRuntimeContext());
    }

    @Override
    public void open(OpenContext ctx) {
        rejected = getRuntimeContext().getMetricGroup().counter(METRIC);
        counts.open(getRuntimeContext());
        in = counts.counter(Tally.IN);
        out = counts.counter(Tally.REJECTED);
        reasons = new RejectReasons();
        counts.restored()
                .forEach(
                        (name, count) -> {
                            if (name.startsWith(REASON)) {
                                reasons.add(name.substring(REASON.length()), count);
                            }
                        });
        getRuntimeContext().addAccumulator(RejectReasons.NAME, reasons);
        first = new RejectReasons.First();
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
        Map<String, Long> byReason = new HashMap<>();
        reasons.getLocalValue().forEach((reason, count) -> byReason.put(REASON + reason, count));
        counts.snapshot(byReason);
    }

    @Override
    public void processElement(String line, Context ctx, Collector<Parsed> collector) {
        in.add(1);
        if (Utf8Lines.unreadable(line)) {
            reject(Utf8Lines.reason(line), line, ctx); // whatever the parser
            return;
        }
        try {
            // ctx.timestamp() boxes: only the parser that reads it asks for it
            collector.collect(
                    timedParser == null
                            ? parser.parse(line)
                            : timedParser.parse(line, ctx.timestamp()));
            first.accepted();
        } catch (LineParser.BadRecord e) {
            reject(e.getMessage(), line, ctx);
        }
    }

    private void reject(String reason, String line, Context ctx) {
        rejected.inc();
        out.add(1);
        ctx.output(TAG, json(reason, line));
        reasons.add(reason);
        String stop = first.rejected(reason);
        if (stop != null) {
            // the same on every restart: fail the job for good
            throw new SuppressRestartsException(new IllegalArgumentException(stop));
        }
    }

    /**
     * {@code {"reason": reason, "record": record}}; a non-UTF-8 record as {@code record_base64}, a
     * record longer than the line cap as the Base64 of its first bytes, {@code
     * record_prefix_base64}.
     */
    public static String json(String reason, String record) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("reason", reason);
            if (record != null && record.startsWith(Utf8Lines.TOO_LONG)) {
                g.writeStringField("record_prefix_base64", Utf8Lines.base64(record));
            } else if (Utf8Lines.unreadable(record)) {
                g.writeStringField("record_base64", Utf8Lines.base64(record));
            } else {
                g.writeStringField("record", record);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }
}
