package io.bloomstream.jobs.io;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.flink.api.common.serialization.Encoder;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Gathers lines into blocks of UTF-8 bytes (each line followed by {@code '\n'}) for a file sink, so
 * that the sink writes a block at a time. Flink's row-format {@code FileSink} writes each record
 * straight to the file's channel: on the local file system, a system call per line, plus one for
 * the file position that its rolling policy asks for. A block is emitted when it holds {@link
 * #BLOCK_BYTES} or more, before every checkpoint barrier ({@link #prepareSnapshotPreBarrier}) and
 * at the end of input ({@link #finish}), so a checkpoint never leaves a line behind in this
 * operator: what the sink commits at a checkpoint is every line before the barrier, as without
 * blocks. The operator keeps no state.
 *
 * <p>Lines are encoded as the row format's {@code SimpleStringEncoder("UTF-8")} does (an unpaired
 * surrogate becomes {@code '?'}), so the files are byte for byte the same.
 */
public final class LineBlocks extends AbstractStreamOperator<byte[]>
        implements OneInputStreamOperator<String, byte[]>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** A block is emitted once it holds this many bytes. */
    public static final int BLOCK_BYTES = 64 * 1024;

    private transient byte[] block;
    private transient int length;
    private transient StreamRecord<byte[]> out;

    @Override
    public void open() throws Exception {
        super.open();
        block = new byte[BLOCK_BYTES + 1024];
        out = new StreamRecord<>(null);
    }

    @Override
    public void processElement(StreamRecord<String> element) {
        String line = element.getValue();
        int chars = line.length();
        ensure(length + chars + 1);
        int n = length;
        for (int i = 0; i < chars; i++) {
            char c = line.charAt(i);
            if (c >= 0x80) {
                n = -1; // not ASCII: the encoder's bytes instead
                break;
            }
            block[n++] = (byte) c;
        }
        if (n < 0) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            ensure(length + bytes.length + 1);
            System.arraycopy(bytes, 0, block, length, bytes.length);
            n = length + bytes.length;
        }
        block[n++] = '\n';
        length = n;
        if (length >= BLOCK_BYTES) {
            emit();
        }
    }

    private void ensure(int needed) {
        if (needed > block.length) {
            block = Arrays.copyOf(block, Math.max(needed, block.length * 2));
        }
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        emit();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() {
        emit();
    }

    @Override
    public void finish() throws Exception {
        emit();
        super.finish();
    }

    private void emit() {
        if (length > 0) {
            output.collect(out.replace(Arrays.copyOf(block, length)));
            length = 0;
            if (block.length > BLOCK_BYTES + 1024) {
                block = new byte[BLOCK_BYTES + 1024]; // a huge line does not keep its buffer
            }
        }
    }

    /** Writes a block as it is: the lines are encoded already. */
    public static final class BlockEncoder implements Encoder<byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public void encode(byte[] block, java.io.OutputStream stream) throws java.io.IOException {
            stream.write(block);
        }
    }
}
