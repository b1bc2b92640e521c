package io.bloomstream.jobs.io;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * Decodes Kafka record values as strict UTF-8 (file lines: {@link Utf8LineFormat}). A value that is
 * not UTF-8 is not dropped, nor collapsed with another by replacement characters: it becomes {@link
 * #NOT_UTF8} followed by its Base64, which the parser rejects to the dead-letter output with the
 * reason {@code "not valid UTF-8 at byte N"} and the original bytes recoverable.
 *
 * <p>The marker starts with {@link #MARK}, an unpaired high surrogate, which a strict UTF-8 decoder
 * never produces (the bytes that would encode it are themselves invalid UTF-8): no valid line can
 * spell a marker, so a line that reads {@code \0not-utf8:...} is an ordinary line.
 *
 * <p>A value longer than the line cap ({@code --max-line-bytes}, default {@value
 * #DEFAULT_MAX_LINE_BYTES} bytes) becomes {@link #TOO_LONG} with its length, the cap and the Base64
 * of its first {@value #PREFIX_BYTES} bytes, rejected with the reason {@code "line of N bytes,
 * longer than --max-line-bytes M"}: one absurd record costs a rejection, not the job's heap.
 */
public final class Utf8Lines implements DeserializationSchema<String> {

    private static final long serialVersionUID = 1L;

    /**
     * The first character of a line a source could not decode: an unpaired high surrogate, which no
     * valid UTF-8 decodes to.
     */
    public static final char MARK = '\uD800';

    /** The prefix that marks a value that was not UTF-8. */
    public static final String NOT_UTF8 = MARK + "not-utf8:";

    /** The prefix that marks a line longer than the cap: {@code N:M:} then Base64 follow. */
    public static final String TOO_LONG = MARK + "too-long:";

    /** The default line cap, in bytes (1 MiB, Kafka's default largest record). */
    public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;

    /** The largest line cap, in bytes (1 GiB: a Java array holds at most 2 GiB). */
    public static final int MAX_MAX_LINE_BYTES = 1 << 30;

    /** How many of a too long line's first bytes its rejection keeps. */
    public static final int PREFIX_BYTES = 1024;

    /** Whether {@code line} is a source's marker rather than a line (see {@link #reason}). */
    public static boolean unreadable(String line) {
        return line != null && !line.isEmpty() && line.charAt(0) == MARK;
    }

    /** One strict decoder per source reader (a reader deserializes from one thread). */
    private transient CharsetDecoder decoder;

    /** The local run whose progress this source reports, or null. */
    private final String runId;

    private transient InputProgress progress;

    /** The line cap in bytes. */
    private final int maxLineBytes;

    /** A deserializer that reports nothing, with the default cap. */
    public Utf8Lines() {
        this(null);
    }

    /**
     * A deserializer that counts records in {@code InputProgress.of(runId)} (null: nowhere), with
     * the default cap.
     */
    public Utf8Lines(String runId) {
        this(runId, DEFAULT_MAX_LINE_BYTES);
    }

    /** As {@link #Utf8Lines(String)}, values longer than {@code maxLineBytes} marked too long. */
    public Utf8Lines(String runId, int maxLineBytes) {
        this.runId = runId;
        this.maxLineBytes = checkCap(maxLineBytes);
    }

    /** {@code maxLineBytes} if it is a valid cap (1 to {@link #MAX_MAX_LINE_BYTES}). */
    public static int checkCap(long maxLineBytes) {
        if (maxLineBytes < 1 || maxLineBytes > MAX_MAX_LINE_BYTES) {
            throw new IllegalArgumentException(
                    "--max-line-bytes must be between 1 and "
                            + MAX_MAX_LINE_BYTES
                            + ", not "
                            + maxLineBytes);
        }
        return (int) maxLineBytes;
    }

    @Override
    public String deserialize(byte[] message) {
        if (decoder == null) {
            decoder = strictDecoder();
            progress = InputProgress.of(runId);
        }
        if (progress != null) {
            progress.add(1, message == null ? 0 : message.length);
        }
        if (message == null) {
            return NOT_UTF8;
        }
        if (message.length > maxLineBytes) {
            return tooLong(message.length, maxLineBytes, message, message.length);
        }
        return decode(decoder, message, message.length);
    }

    /** A UTF-8 decoder that reports malformed input instead of replacing it. */
    static CharsetDecoder strictDecoder() {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }

    /**
     * {@code bytes[0, length)} decoded by the strict {@code decoder}, or {@link #NOT_UTF8} followed
     * by the Base64 of those bytes when they are not UTF-8.
     */
    static String decode(CharsetDecoder decoder, byte[] bytes, int length) {
        if (isAscii(bytes, length)) {
            // ASCII is valid UTF-8 and decodes to itself: one copy, none of the decoder's buffers
            return new String(bytes, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        try {
            return decoder.decode(ByteBuffer.wrap(bytes, 0, length)).toString(); // resets it
        } catch (CharacterCodingException e) {
            return NOT_UTF8 + Base64.getEncoder().encodeToString(Arrays.copyOf(bytes, length));
        }
    }

    private static boolean isAscii(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            if (bytes[i] < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * The marker of a line of {@code length} bytes, longer than {@code cap}, whose first {@code
     * valid} bytes are in {@code prefix}.
     */
    static String tooLong(long length, int cap, byte[] prefix, int valid) {
        int kept = Math.min(valid, PREFIX_BYTES);
        return TOO_LONG
                + length
                + ":"
                + cap
                + ":"
                + Base64.getEncoder().encodeToString(Arrays.copyOf(prefix, kept));
    }

    /** The length in bytes of the line a {@link #TOO_LONG} marker stands for. */
    public static long length(String tooLong) {
        int end = tooLong.indexOf(':', TOO_LONG.length());
        return Long.parseLong(tooLong.substring(TOO_LONG.length(), end));
    }

    /**
     * The Base64 of the bytes a marker keeps: a {@link #NOT_UTF8} line's bytes, a {@link #TOO_LONG}
     * line's first ones.
     */
    static String base64(String marker) {
        return marker.startsWith(TOO_LONG)
                ? marker.substring(
                        marker.indexOf(':', marker.indexOf(':', TOO_LONG.length()) + 1) + 1)
                : marker.substring(NOT_UTF8.length());
    }

    /**
     * The reason a marked record was rejected: for {@link #NOT_UTF8} {@code "not valid UTF-8 at
     * byte N"}, N being the 0-based offset of the first byte that is not UTF-8; for {@link
     * #TOO_LONG} {@code "line of N bytes, longer than --max-line-bytes M"}.
     */
    public static String reason(String notUtf8) {
        if (notUtf8.startsWith(TOO_LONG)) {
            String[] parts = notUtf8.substring(TOO_LONG.length()).split(":", 3);
            return "line of " + parts[0] + " bytes, longer than --max-line-bytes " + parts[1];
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(notUtf8.substring(NOT_UTF8.length()));
        } catch (IllegalArgumentException e) {
            return "not valid UTF-8";
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CoderResult r = strictDecoder().decode(in, CharBuffer.allocate(bytes.length), true);
        return r.isError() ? "not valid UTF-8 at byte " + in.position() : "not valid UTF-8";
    }

    @Override
    public boolean isEndOfStream(String nextElement) {
        return false;
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }
}
