package io.bloomstream.flink.screen;

import static io.bloomstream.testing.GoldenSnapshots.VERSIONS;
import static io.bloomstream.testing.GoldenSnapshots.file;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Restores the committed snapshots of the screen operator under {@code
 * src/test/resources/savepoints} for every released layout (see {@link
 * io.bloomstream.testing.GoldenSnapshots}); from {@code 0.3} on, its broadcast state also records
 * the file's checksum and the last update's sequence number. The files are written by {@link
 * #writeSnapshots} with {@code -Dbloomstream.writeSnapshots=true -Dbloomstream.snapshotVersion=V};
 * screen state is written by its current layout only, so older files are kept.
 */
class ScreenStateGoldenTest {

    static final String SCREEN_FILTER = "src/test/resources/savepoints/screen-filter.bloom";

    static ScreenConfig<String> screenConfig() {
        return ScreenFunctionTest.config(SCREEN_FILTER);
    }

    @Test
    void screenSnapshotsRestore() throws Exception {
        for (String version : VERSIONS) {
            OperatorSubtaskState state =
                    OperatorSnapshotUtil.readStateHandle(file("screen", version, null).toString());
            try (var h =
                    ScreenFunctionTest.open(
                            new ScreenFunction<>(
                                    screenConfig(),
                                    ScreenFunctionTest.FLAGGED,
                                    ScreenFunctionTest.REJECTED),
                            state)) {
                h.processElement("new@spam.example,a@b.example", 1);
                h.processElement("phisher@evil.example,a@b.example", 2);
                h.processElement("spammer@bad.example,a@b.example", 3);
                assertThat(ScreenFunctionTest.clean(h))
                        .as(version)
                        .containsExactly("phisher@evil.example,a@b.example");
                assertThat(ScreenFunctionTest.flagged(h)).hasSize(2);
            }
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        String version = System.getProperty("bloomstream.snapshotVersion", "0.4");
        Files.createDirectories(Path.of(SCREEN_FILTER).getParent());
        if (!Files.exists(Path.of(SCREEN_FILTER))) {
            ScreenFunctionTest.writeFilter(
                    Path.of(SCREEN_FILTER),
                    Normalization.EMAIL,
                    Hasher.defaultHasher(),
                    "spammer@bad.example",
                    "Phisher@Evil.example");
        }
        try (var h =
                ScreenFunctionTest.open(
                        new ScreenFunction<>(
                                screenConfig(),
                                ScreenFunctionTest.FLAGGED,
                                ScreenFunctionTest.REJECTED),
                        null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example").withSequence(1), 1);
            h.processBroadcastElement(
                    FilterUpdate.remove("phisher@evil.example").withSequence(2), 2);
            OperatorSnapshotUtil.writeStateHandle(
                    h.snapshot(1, 10), file("screen", version, null).toString());
        }
    }
}
