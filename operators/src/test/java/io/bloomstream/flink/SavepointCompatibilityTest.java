package io.bloomstream.flink;

import static io.bloomstream.flink.DedupHarness.output;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.DedupHarness.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Restores operator snapshots committed under {@code src/test/resources/savepoints}, written by
 * bloomstream 0.1 with heap and RocksDB backends: the state layout (state names, serializers and
 * their snapshots) must stay restorable. Rewrite them only when adding a new version's files, with
 * {@code -Dbloomstream.writeSnapshots=true}.
 */
class SavepointCompatibilityTest {

    private static final DedupConfig CONFIG =
            DedupConfig.builder().expectedItems(100).fpp(0.01).build();
    private static final int IDS = 1000;

    static Path file(Backend backend) {
        return Path.of(
                "src/test/resources/savepoints/dedup-0.1-"
                        + backend.name().toLowerCase()
                        + ".snapshot");
    }

    static String event(int i) {
        return "k" + (i % 5) + "," + i;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void restoresTheCommittedSnapshot(Backend backend) throws Exception {
        try (var h = DedupHarness.create(CONFIG, backend, 1, 0)) {
            h.initializeState(OperatorSnapshotUtil.readStateHandle(file(backend).toString()));
            h.open();
            for (int i = 0; i < IDS; i++) {
                h.processElement(event(i), 0);
            }
            assertThat(output(h)).as("every id of the snapshot is remembered").isEmpty();
            for (int i = IDS; i < IDS + 100; i++) {
                h.processElement(event(i), 0);
            }
            // 100 new ids, cascade rate <= 1%: 4.5 sigma allows 5 false drops.
            assertThat(output(h).size()).isBetween(95, 100);
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        for (Backend backend : Backend.values()) {
            try (var h = DedupHarness.create(CONFIG, backend, 1, 0)) {
                h.open();
                for (int i = 0; i < IDS; i++) {
                    h.processElement(event(i), 0);
                }
                Files.createDirectories(file(backend).getParent());
                OperatorSnapshotUtil.writeStateHandle(h.snapshot(1, 1), file(backend).toString());
            }
        }
    }
}
