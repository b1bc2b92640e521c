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
 *
 * <p>A line longer than the cap ({@code --max-line-bytes}, default {@value
 * Utf8Lines#DEFAULT_MAX_LINE_BYTES} bytes) is not held: the reader keeps its first bytes up to the
 * cap, counts and drops the rest up to the next terminator, and returns {@link Utf8Lines#TOO_LONG}
 * with the length and the first {@value Utf8Lines#PREFIX_BYTES} bytes, which the parser rejects
 * (reason {@code "line of N bytes, longer than --max-line-bytes M"}). A reader's memory is bounded
 * by the cap whatever the file holds.
 */
public final class Utf8LineFormat extends SimpleStreamFormat<String> {

    private static final long serialVersionUID = 1L;

    /** The local run whose progress the readers report, or null. */
    private final String runId;

    /** The line cap in bytes. */
    private final int maxLineBytes;

    /** A format whose readers report nothing, with the default cap. */
    public Utf8LineFormat() {
        this(null);
    }

    /**
     * A format whose readers add the lines and bytes they read to {@code InputProgress.of(runId)}
     * (null: nowhere), once per buffer of 64 KiB and at the end of a file; the default cap.
     */
    public Utf8LineFormat(String runId) {
        this(runId, Utf8Lines.DEFAULT_MAX_LINE_BYTES);
    }

    /** As {@link #Utf8LineFormat(String)}, lines longer than {@code maxLineBytes} marked. */
    public Utf8LineFormat(String runId, int maxLineBytes) {
        this.runId = runId;
        this.maxLineBytes = Utf8Lines.checkCap(maxLineBytes);
    }

    @Override
    public Reader<String> createReader(Configuration config, FSDataInputStream stream) {
        return new LineReader(stream, InputProgress.of(runId), maxLineBytes);
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }

    /** Splits a byte stream into lines and decodes each one strictly; caps their length. */
    public static final class LineReader implements Reader<String> {
        private final InputStream in;
        private final CharsetDecoder decoder = Utf8Lines.strictDecoder();
        private final byte[] buffer = new byte[64 * 1024];
        private int pos;
        private int limit;
        private byte[] line = new byte[256];
        private boolean skipLf; // the previous line ended with \r: a following \n belongs to it
        private final InputProgress progress;
        private final int maxLineBytes;
        private long lines; // lines returned since the last report

        /** A reader of {@code in} with the default cap. */
        public LineReader(InputStream in) {
            this(in, null, Utf8Lines.DEFAULT_MAX_LINE_BYTES);
        }

        /**
         * A reader of {@code in} reporting to {@code progress} (null: nowhere), marking lines
         * longer than {@code maxLineBytes}.
         */
        public LineReader(InputStream in, InputProgress progress, int maxLineBytes) {
            this.in = in;
            this.progress = progress;
            this.maxLineBytes = Utf8Lines.checkCap(maxLineBytes);
        }

        /** The bytes the line buffer holds now (at most the cap). */
        int bufferSize() {
            return line.length;
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
            int length = 0; // bytes kept in line, at most the cap
            long total = 0; // bytes of the line
            while (true) {
                if (pos == limit) {
                    report();
                    limit = in.read(buffer, 0, buffer.length);
                    pos = 0;
                    if (limit <= 0) {
                        limit = 0;
                        if (total == 0) {
                            return null;
                        }
                        lines++;
                        return line(length, total);
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
                    return line(length, total);
                }
                total++;
                if (length < maxLineBytes) {
                    if (length == line.length) {
                        line = Arrays.copyOf(line, (int) Math.min(2L * length, maxLineBytes));
                    }
                    line[length++] = b;
                }
            }
        }

        /** The line of {@code total} bytes whose first {@code length} are in {@link #line}. */
        private String line(int length, long total) {
            return total > maxLineBytes
                    ? Utf8Lines.tooLong(total, maxLineBytes, line, length)
                    : Utf8Lines.decode(decoder, line, length);
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
