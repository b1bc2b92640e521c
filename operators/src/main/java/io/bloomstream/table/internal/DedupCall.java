package io.bloomstream.table.internal;

import io.bloomstream.flink.dedup.DedupConfig;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The scalar arguments of one {@code BLOOM_DEDUP} call, as {@code eval} receives them. Rows waiting
 * for the watermark carry them ({@link PendingRows}): a timer that fires after a restore, before
 * any row reached the task, judges them under the call that buffered them.
 *
 * <p>Encoded (format 1, inside {@link PendingRows}' format 1) as, in order: the id column (UTF),
 * then each optional argument as a presence byte (0 or 1) and its value: expected items (int),
 * shards (int), fpp (UTF of the decimal), retention and state TTL (long milliseconds), reset on
 * duplicate (boolean), generations (int), exact (boolean), first by (UTF).
 */
@Internal
public final class DedupCall {

    final String idColumn;
    final Integer expectedItems;
    final Integer shards;
    final BigDecimal fpp;
    final Duration retention;
    final Duration stateTtl;
    final Boolean resetTtlOnDuplicate;
    final Integer generations;
    final Boolean exact;
    final String firstBy;

    /** The arguments as {@code eval} receives them (null: not given). */
    public DedupCall(
            String idColumn,
            Integer expectedItems,
            Integer shards,
            BigDecimal fpp,
            Duration retention,
            Duration stateTtl,
            Boolean resetTtlOnDuplicate,
            Integer generations,
            Boolean exact,
            String firstBy) {
        this.idColumn = idColumn;
        this.expectedItems = expectedItems;
        this.shards = shards;
        this.fpp = fpp;
        this.retention = retention;
        this.stateTtl = stateTtl;
        this.resetTtlOnDuplicate = resetTtlOnDuplicate;
        this.generations = generations;
        this.exact = exact;
        this.firstBy = firstBy;
    }

    /** The id column argument, as written. */
    public String idColumn() {
        return idColumn;
    }

    /** The config of the call ({@link DedupArguments#config}). */
    public DedupConfig config(boolean onTime) {
        return DedupArguments.config(
                expectedItems,
                shards,
                fpp,
                retention,
                stateTtl,
                resetTtlOnDuplicate,
                generations,
                exact,
                onTime);
    }

    /** Which row of an id is its first ({@link DedupArguments#firstBy}). */
    public DedupArguments.FirstBy firstBy(boolean onTime) {
        return DedupArguments.firstBy(firstBy, onTime);
    }

    void write(DataOutputView out) throws IOException {
        out.writeUTF(idColumn);
        writeInt(out, expectedItems);
        writeInt(out, shards);
        writeUtf(out, fpp == null ? null : fpp.toPlainString());
        writeLong(out, retention == null ? null : retention.toMillis());
        writeLong(out, stateTtl == null ? null : stateTtl.toMillis());
        writeBoolean(out, resetTtlOnDuplicate);
        writeInt(out, generations);
        writeBoolean(out, exact);
        writeUtf(out, firstBy);
    }

    static DedupCall read(DataInputView in) throws IOException {
        String idColumn = in.readUTF();
        Integer expectedItems = in.readBoolean() ? in.readInt() : null;
        Integer shards = in.readBoolean() ? in.readInt() : null;
        BigDecimal fpp = in.readBoolean() ? new BigDecimal(in.readUTF()) : null;
        Duration retention = in.readBoolean() ? Duration.ofMillis(in.readLong()) : null;
        Duration stateTtl = in.readBoolean() ? Duration.ofMillis(in.readLong()) : null;
        Boolean reset = in.readBoolean() ? in.readBoolean() : null;
        Integer generations = in.readBoolean() ? in.readInt() : null;
        Boolean exact = in.readBoolean() ? in.readBoolean() : null;
        String firstBy = in.readBoolean() ? in.readUTF() : null;
        return new DedupCall(
                idColumn,
                expectedItems,
                shards,
                fpp,
                retention,
                stateTtl,
                reset,
                generations,
                exact,
                firstBy);
    }

    private static void writeInt(DataOutputView out, Integer v) throws IOException {
        out.writeBoolean(v != null);
        if (v != null) {
            out.writeInt(v);
        }
    }

    private static void writeLong(DataOutputView out, Long v) throws IOException {
        out.writeBoolean(v != null);
        if (v != null) {
            out.writeLong(v);
        }
    }

    private static void writeBoolean(DataOutputView out, Boolean v) throws IOException {
        out.writeBoolean(v != null);
        if (v != null) {
            out.writeBoolean(v);
        }
    }

    private static void writeUtf(DataOutputView out, String v) throws IOException {
        out.writeBoolean(v != null);
        if (v != null) {
            out.writeUTF(v);
        }
    }
}
