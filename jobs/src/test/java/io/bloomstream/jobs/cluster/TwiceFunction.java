package io.bloomstream.jobs.cluster;

import org.apache.flink.table.functions.ScalarFunction;

/**
 * A test function that FlinkClusterITCase ships to the cluster in a jar of its own ({@code ADD
 * JAR}): doubles a BIGINT. Top-level, as the code Flink generates names the class, and a nested
 * class would need its outer class in that jar too.
 */
public final class TwiceFunction extends ScalarFunction {
    /** {@code 2 * x}, NULL for NULL. */
    public Long eval(Long x) {
        return x == null ? null : 2 * x;
    }
}
