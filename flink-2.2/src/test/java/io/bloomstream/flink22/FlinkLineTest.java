package io.bloomstream.flink22;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.table.functions.ProcessTableFunction;
import org.junit.jupiter.api.Test;

/**
 * Tests that this module runs the operators' suites on the second Flink line and not, through a
 * stray managed version, on the default one.
 */
class FlinkLineTest {

    @Test
    void flinkOnTheClassPathIsTheSecondLine() {
        assertThat(EnvironmentInformation.getVersion())
                .isEqualTo(System.getProperty("bloomstream.flink2.version"));
    }

    @Test
    void theTableApiOnTheClassPathIsThe22One() throws Exception {
        // TimeContext#tableWatermark() is new in flink-table-common 2.3.0.
        assertThat(ProcessTableFunction.TimeContext.class.getMethods())
                .noneMatch(m -> m.getName().equals("tableWatermark"));
    }
}
