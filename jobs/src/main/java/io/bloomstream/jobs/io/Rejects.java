package io.bloomstream.jobs.io;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses lines, sending records that cannot be used to the rejected side output as JSON ({@code
 * reason}, {@code record}) and counting them (metric {@value #METRIC}).
 */
public final class Rejects extends ProcessFunction<String, Parsed> {

    private static final long serialVersionUID = 1L;

    /** Counter of records rejected while parsing. */
    public static final String METRIC = "bloomParseRejected";

    /** The side output of rejected records, one JSON object each. */
    public static final OutputTag<String> TAG = new OutputTag<>("rejected", Types.STRING);

    private static final JsonFactory JSON = new JsonFactory();

    private final LineParser parser;
    private final boolean complete;
    private transient Counter rejected;

    /** Parses with {@code parser}; if {@code complete}, every field is required. */
    public Rejects(LineParser parser, boolean complete) {
        this.parser = parser;
        this.complete = complete;
    }

    @Override
    public void open(OpenContext ctx) {
        rejected = getRuntimeContext().getMetricGroup().counter(METRIC);
    }

    @Override
    public void processElement(String line, Context ctx, Collector<Parsed> out) {
        try {
            out.collect(complete ? parser.parseComplete(line) : parser.parse(line));
        } catch (LineParser.BadRecord e) {
            rejected.inc();
            ctx.output(TAG, json(e.getMessage(), line));
        }
    }

    /**
     * {@code {"reason": reason, "record": record}}; a non-UTF-8 record as {@code record_base64}.
     */
    public static String json(String reason, String record) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("reason", reason);
            if (record != null && record.startsWith(Utf8Lines.NOT_UTF8)) {
                g.writeStringField("record_base64", record.substring(Utf8Lines.NOT_UTF8.length()));
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
