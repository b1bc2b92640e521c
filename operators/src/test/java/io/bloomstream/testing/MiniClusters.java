package io.bloomstream.testing;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** The mini cluster of the ITs. */
public final class MiniClusters {

    private MiniClusters() {}

    /** Two task managers with two slots each, so that every IT crosses a network shuffle. */
    public static MiniClusterExtension twoTaskManagers() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(2)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }
}
