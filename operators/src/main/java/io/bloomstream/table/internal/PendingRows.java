package io.bloomstream.table.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.utils.LogicalTypeUtils;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.types.Row;

/**
 * The rows of {@code BLOOM_DEDUP} with {@code first_by => 'EVENT_TIME'} that wait for the watermark
 * to pass their event time, per partition key, in the state entry {@value
 * SqlDedupLayout#PENDING_STATE}: a {@code MapView<BIGINT, BYTES>} from an event time (epoch
 * milliseconds) to the rows of that time, in their order of arrival.
 *
 * <p><b>Format 1</b> of a value (part of the savepoint contract, golden snapshots in {@code
 * BloomDedupEventTimeGoldenTest}): one byte, the format (1); four bytes, big-endian, the
 * fingerprint of the input's row type ({@link #fingerprint}); a four-byte length and the call's
 * arguments ({@link DedupCall}, so that a timer firing before any row reached a restored task
 * judges under them); then per row a four-byte big-endian length and the row as Flink's {@code
 * ExternalSerializer} of the input's type (time attributes removed) writes it. A value whose format
 * or fingerprint differs is refused with a message naming both: a restore that changes the input's
 * columns while rows wait cannot read them.
 */
@Internal
public final class PendingRows {

    /** Format 1 of a value (this release). */
    public static final int VERSION_1 = 1;

    /** The format of a value written now. */
    public static final int VERSION = VERSION_1;

    private static final int HEADER = 5;

    /** The header of a new value: format, fingerprint and the call. */
    private final byte[] header;

    private final TypeSerializer<Row> serializer;
    private final int fingerprint;
    private final String typeName;
    private final DataOutputSerializer out = new DataOutputSerializer(256);
    private final DataInputDeserializer in = new DataInputDeserializer();

    /**
     * Rows of the input type {@code inputType} (a ROW, with or without time attributes), buffered
     * by {@code call}.
     */
    @SuppressWarnings("unchecked")
    public PendingRows(DataType inputType, DedupCall call) throws IOException {
        LogicalType plain = LogicalTypeUtils.removeTimeAttributes(inputType.getLogicalType());
        this.serializer =
                (TypeSerializer<Row>)
                        (TypeSerializer<?>)
                                ExternalSerializer.of(TypeConversions.fromLogicalToDataType(plain));
        this.fingerprint = fingerprint(plain);
        this.typeName = plain.asSummaryString();
        DataOutputSerializer h = new DataOutputSerializer(64);
        h.writeByte(VERSION);
        h.writeInt(fingerprint);
        h.writeInt(0);
        call.write(h);
        this.header = h.getCopyOfBuffer();
        int callLength = header.length - HEADER - 4;
        header[HEADER] = (byte) (callLength >>> 24);
        header[HEADER + 1] = (byte) (callLength >>> 16);
        header[HEADER + 2] = (byte) (callLength >>> 8);
        header[HEADER + 3] = (byte) callLength;
    }

    /**
     * The call that buffered the rows of {@code value} (format 1), for a timer that fires before
     * any row configured the function.
     */
    public static DedupCall callOf(byte[] value, long time) throws IOException {
        checkFormat(value, time);
        DataInputDeserializer in =
                new DataInputDeserializer(value, HEADER + 4, value.length - HEADER - 4);
        return DedupCall.read(in);
    }

    /**
     * The fingerprint of a row type: the {@code String.hashCode} (fixed by the Java language) of
     * its summary string, which names every field and its type.
     */
    static int fingerprint(LogicalType plainRowType) {
        return plainRowType.asSummaryString().hashCode();
    }

    /** Appends {@code row} to the rows of event time {@code time}. */
    public void add(MapView<Long, byte[]> view, long time, Row row) throws Exception {
        byte[] before = view.get(time);
        out.clear();
        if (before == null) {
            out.write(header);
        } else {
            check(before, time);
            out.write(before);
        }
        int lengthAt = out.length();
        out.writeInt(0);
        serializer.serialize(row, out);
        int length = out.length() - lengthAt - 4;
        byte[] value = out.getCopyOfBuffer();
        value[lengthAt] = (byte) (length >>> 24);
        value[lengthAt + 1] = (byte) (length >>> 16);
        value[lengthAt + 2] = (byte) (length >>> 8);
        value[lengthAt + 3] = (byte) length;
        view.put(time, value);
    }

    /** The rows of a value of format 1 (of time {@code time}), in their order of arrival. */
    public List<Row> decode(byte[] value, long time) throws IOException {
        check(value, time);
        int callLength = readInt(value, HEADER);
        int rowsAt = HEADER + 4 + callLength;
        if (callLength < 0 || rowsAt > value.length) {
            throw new IOException(
                    "Possible corruption: "
                            + SqlDedupLayout.PENDING_STATE
                            + " at time "
                            + time
                            + " has a call of length "
                            + callLength
                            + " in "
                            + value.length
                            + " bytes");
        }
        List<Row> rows = new ArrayList<>(2);
        in.setBuffer(value, rowsAt, value.length - rowsAt);
        while (in.available() > 0) {
            int length = in.readInt();
            if (length < 0 || length > in.available()) {
                throw new IOException(
                        "Possible corruption: a row of "
                                + SqlDedupLayout.PENDING_STATE
                                + " at time "
                                + time
                                + " has length "
                                + length
                                + ", with "
                                + in.available()
                                + " bytes left");
            }
            int end = value.length - in.available() + length;
            rows.add(serializer.deserialize(in));
            if (value.length - in.available() != end) {
                throw new IOException(
                        "Possible corruption: a row of "
                                + SqlDedupLayout.PENDING_STATE
                                + " at time "
                                + time
                                + " does not end at its length "
                                + length);
            }
        }
        return rows;
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24)
                | ((b[at + 1] & 0xFF) << 16)
                | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }

    private static void checkFormat(byte[] value, long time) throws IOException {
        if (value.length < HEADER + 4 || value[0] != VERSION) {
            throw new IOException(
                    "Possible corruption: "
                            + SqlDedupLayout.PENDING_STATE
                            + " at time "
                            + time
                            + " has format "
                            + (value.length == 0 ? "(empty)" : Byte.toString(value[0]))
                            + ", this release reads format "
                            + VERSION
                            + " (bytes "
                            + Arrays.toString(Arrays.copyOf(value, Math.min(value.length, 8)))
                            + ")");
        }
    }

    private void check(byte[] value, long time) throws IOException {
        checkFormat(value, time);
        int written = readInt(value, 1);
        if (written != fingerprint) {
            throw new IllegalStateException(
                    "BLOOM_DEDUP: rows waiting for the watermark in "
                            + SqlDedupLayout.PENDING_STATE
                            + " were written for an input of another row type (fingerprint "
                            + written
                            + "); this query's input is "
                            + typeName
                            + " (fingerprint "
                            + fingerprint
                            + "). Restore with the input's columns unchanged, or from a savepoint"
                            + " taken with no rows waiting (after the input ended)");
        }
    }
}
