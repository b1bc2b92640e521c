package io.bloomstream.testing;

import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;

/**
 * The committed operator snapshots under {@code src/test/resources/savepoints}: one file per
 * operator, released state layout and (for keyed state) backend, named {@code
 * OPERATOR-VERSION[-BACKEND].snapshot}. Their restore tests sit beside each operator.
 */
public final class GoldenSnapshots {

    /** Every released state layout, oldest first. */
    public static final List<String> VERSIONS = List.of("0.1", "0.2", "0.3", "0.4");

    /** The first version whose count and overlap metadata record set bits (layout 3). */
    public static final String SET_BITS_SINCE = "0.4";

    private GoldenSnapshots() {}

    /** The file of {@code operator} at {@code version}; {@code backend} null for operator state. */
    public static Path file(String operator, String version, Backend backend) {
        return Path.of(
                "src/test/resources/savepoints/"
                        + operator
                        + "-"
                        + version
                        + (backend == null ? "" : "-" + backend.name().toLowerCase())
                        + ".snapshot");
    }

    /** The snapshot of {@code operator} at {@code version}. */
    public static OperatorSubtaskState read(String operator, String version, Backend backend)
            throws Exception {
        return OperatorSnapshotUtil.readStateHandle(file(operator, version, backend).toString());
    }
}
