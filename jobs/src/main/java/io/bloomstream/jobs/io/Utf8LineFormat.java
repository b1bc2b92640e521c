package io.bloomstream.jobs.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharsetDecoder;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * Lines of a file, decoded as strict UTF-8: the file counterpart of {@link Utf8Lines}. Flink's
 * {@code TextLineInputFormat} decodes with replacement characters, so two different invalid lines
 * became the same string (and the same id); here a line that is not UTF-8 becomes {@link
 * Utf8Lines#NOT_UTF8} followed by its Base64, which the parser rejects with the byte offset of the
 * first invalid byte and the original bytes recoverable.
 *
 * <p>Lines end at {@code \n}, {@code \r\n} or {@code \r} (as {@code BufferedReader.readLine}),
 * which are not part of the line; a last line without a terminator is read too.
 */
public final class Utf8LineFormat extends SimpleStreamFormat<String> {

    private static final long serialVersionUID = 1L;

    /** The local run whose progress the readers report, or null. */
    private final String runId;

    /** A format whose readers report nothing. */
    public Utf8LineFormat() {
        this(null);
    }

    /**
     * A format whose readers add the lines and bytes they read to {@code InputProgress.of(runId)}
     * (null: nowhere), once per buffer of 64 KiB and at the end of a file.
     */
    public Utf8LineFormat(String runId) {
        this.runId = runId;
    }

    @Override
    public Reader<String> createReader(Configuration config, FSDataInputStream stream) {
        return new LineReader(stream, InputProgress.of(runId));
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }

    /** Splits a byte stream into lines and decodes each one strictly. */
    static final class LineReader implements Reader<String> {
        private final InputStream in;
        private final CharsetDecoder decoder = Utf8Lines.strictDecoder();
        private final byte[] buffer = new byte[64 * 1024];
        private int pos;
        private int limit;
        private byte[] line = new byte[256];
        private boolean skipLf; // the previous line ended with \r: a following \n belongs to it
        private final InputProgress progress;
        private long lines; // lines returned since the last report

        LineReader(InputStream in) {
            this(in, null);
        }

        LineReader(InputStream in, InputProgress progress) {
            this.in = in;
            this.progress = progress;
        }

        /** Reports the lines returned and the bytes consumed since the last report. */
        private void report() {
            if (progress != null) {
                progress.add(lines, limit);
                lines = 0;
            }
        }

        @Override
        public String read() throws IOException {
            int length = 0;
            while (true) {
                if (pos == limit) {
                    report();
                    limit = in.read(buffer, 0, buffer.length);
                    pos = 0;
                    if (limit <= 0) {
                        limit = 0;
                        if (length == 0) {
                            return null;
                        }
                        lines++;
                        return Utf8Lines.decode(decoder, line, length);
                    }
                }
                byte b = buffer[pos++];
                if (skipLf) {
                    skipLf = false;
                    if (b == '\n') {
                        continue;
                    }
                }
                if (b == '\n' || b == '\r') {
                    skipLf = b == '\r';
                    lines++;
                    return Utf8Lines.decode(decoder, line, length);
                }
                if (length == line.length) {
                    line = Arrays.copyOf(line, 2 * length);
                }
                line[length++] = b;
            }
        }

        @Override
        public void close() throws IOException {
            if (progress != null && lines > 0) {
                progress.add(lines, 0); // the last line without a terminator
                lines = 0;
            }
            in.close();
        }
    }
}
