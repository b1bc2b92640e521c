package io.bloomstream.jobs.io;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * Decodes Kafka record values as strict UTF-8. A value that is not UTF-8 is not dropped: it becomes
 * {@link #NOT_UTF8} followed by its Base64, which the parser rejects to the dead-letter output with
 * the original bytes recoverable.
 */
public final class Utf8Lines implements DeserializationSchema<String> {

    private static final long serialVersionUID = 1L;

    /** The prefix that marks a value that was not UTF-8. */
    public static final String NOT_UTF8 = "\u0000not-utf8:";

    /** One strict decoder per source reader (a reader deserializes from one thread). */
    private transient CharsetDecoder decoder;

    @Override
    public String deserialize(byte[] message) {
        if (message == null) {
            return NOT_UTF8;
        }
        if (decoder == null) {
            decoder =
                    StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT);
        }
        try {
            return decoder.decode(ByteBuffer.wrap(message)).toString(); // resets the decoder
        } catch (CharacterCodingException e) {
            return NOT_UTF8 + Base64.getEncoder().encodeToString(message);
        }
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
