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

    @Override
    public Reader<String> createReader(Configuration config, FSDataInputStream stream) {
        return new LineReader(stream);
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

        LineReader(InputStream in) {
            this.in = in;
        }

        @Override
        public String read() throws IOException {
            int length = 0;
            while (true) {
                if (pos == limit) {
                    limit = in.read(buffer, 0, buffer.length);
                    pos = 0;
                    if (limit <= 0) {
                        limit = 0;
                        return length == 0 ? null : Utf8Lines.decode(decoder, line, length);
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
            in.close();
        }
    }
}
