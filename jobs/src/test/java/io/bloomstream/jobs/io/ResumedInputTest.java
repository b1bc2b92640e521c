package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link ResumedInput}: when a run on a state directory resumes its file source. */
class ResumedInputTest {

    @TempDir Path tmp;

    private Path state;
    private Path input;
    private List<String> outputs;

    @BeforeEach
    void setUp() throws Exception {
        state = Files.createDirectories(tmp.resolve("state"));
        input = tmp.resolve("day1.txt");
        Files.writeString(input, "a\nb\n");
        outputs = List.of(tmp.resolve("out").toString());
    }

    /**
     * A retained checkpoint (a killed run), or a savepoint (a stopped one), newer than the rest.
     */
    private void leave(String where, long millis) throws Exception {
        Path metadata = Files.createDirectories(state.resolve(where)).resolve("_metadata");
        Files.writeString(metadata, "x");
        Files.setLastModifiedTime(metadata, FileTime.fromMillis(millis));
    }

    private ResumedInput.Decision firstRun() throws Exception {
        ResumedInput.Decision d =
                ResumedInput.decide(state, input.toString(), outputs, false, "r1");
        ResumedInput.record(state, d, input.toString(), outputs);
        return d;
    }

    @Test
    void aNewDirectoryOrASavepointStartsANewSource() throws Exception {
        assertThat(firstRun()).isEqualTo(new ResumedInput.Decision("r1", null, null));
        leave("savepoints/savepoint-1", 1_000);
        ResumedInput.Decision next =
                ResumedInput.decide(state, input.toString(), outputs, false, "r2");
        assertThat(next.sourceId()).isEqualTo("r2");
        assertThat(next.recovers()).isFalse();
    }

    @Test
    void aKilledRunsCheckpointIsRecoveredWithItsSource() throws Exception {
        firstRun();
        leave("savepoints/savepoint-1", 1_000);
        leave("checkpoints/job/chk-3", 2_000);
        ResumedInput.Decision next =
                ResumedInput.decide(state, input.toString(), outputs, false, "r2");
        assertThat(next.sourceId()).isEqualTo("r1");
        assertThat(next.recovers()).isTrue();
        assertThat(next.checkpoint().getFileName()).hasToString("chk-3");
        ResumedInput.record(state, next, input.toString(), outputs);
        // killed again: still the first run's source
        assertThat(ResumedInput.decide(state, input.toString(), outputs, false, "r3").sourceId())
                .isEqualTo("r1");
    }

    @Test
    void aRecoveryOverAnotherInputIsRefusedUnlessNewInput() throws Exception {
        firstRun();
        leave("checkpoints/job/chk-3", 2_000);
        Path day2 = tmp.resolve("day2.txt");
        Files.writeString(day2, "c\n");
        assertThatThrownBy(() -> ResumedInput.decide(state, day2.toString(), outputs, false, "r2"))
                .isInstanceOf(ResumedInput.RefusedException.class)
                .hasMessageContaining("was killed before it finished its input")
                .hasMessageContaining("day1.txt")
                .hasMessageContaining("this run gives --input " + day2)
                .hasMessageContaining("--new-input");
        ResumedInput.Decision forced =
                ResumedInput.decide(state, day2.toString(), outputs, true, "r2");
        assertThat(forced.sourceId()).isEqualTo("r2");
        assertThat(forced.recovers()).isFalse();
    }

    @Test
    void aRecoveryOverAChangedInputOrIntoOtherOutputsIsRefused() throws Exception {
        firstRun();
        leave("checkpoints/job/chk-3", 2_000);
        assertThatThrownBy(
                        () ->
                                ResumedInput.decide(
                                        state,
                                        input.toString(),
                                        List.of(tmp.resolve("elsewhere").toString()),
                                        false,
                                        "r2"))
                .isInstanceOf(ResumedInput.RefusedException.class)
                .hasMessageContaining("a recovery writes where the killed run wrote");
        Files.writeString(input, "a\nb\nc\n");
        assertThatThrownBy(() -> ResumedInput.decide(state, input.toString(), outputs, false, "r2"))
                .isInstanceOf(ResumedInput.RefusedException.class)
                .hasMessageContaining("the input changed since that run began reading it")
                .hasMessageContaining("1 file, 4 bytes")
                .hasMessageContaining("1 file, 6 bytes");
    }

    /** The committed golden file of format 1, as the first 0.5 writes it. */
    @Test
    void readsTheGoldenRecordOfFormat1() throws Exception {
        Files.copy(
                Path.of("src/test/resources/state-dir/input-format-1.properties"),
                state.resolve(ResumedInput.FILE));
        ResumedInput.Recorded r = ResumedInput.read(state).orElseThrow();
        assertThat(r.source()).isEqualTo("d64f9ca9-4192-46f6-b8b5-3b4cf539750d");
        assertThat(r.input()).isEqualTo("file:///data/day1.txt");
        assertThat(r.outputs()).containsExactly("file:///data/flagged", "file:///data/out");
        assertThat(r.fingerprint()).hasSize(64);
        assertThat(r.described())
                .isEqualTo("1 file, 52334057 bytes, modified 2026-11-28T14:15:42.646Z");
        assertThat(r.started())
                .isEqualTo(java.time.Instant.parse("2026-11-28T14:15:55.081900391Z"));
        assertThat(ResumedInput.FORMAT).isEqualTo(1);
    }

    @Test
    void aRecordOfAnotherFormatIsRefused() throws Exception {
        firstRun();
        leave("checkpoints/job/chk-3", 2_000);
        Files.writeString(state.resolve(ResumedInput.FILE), "format=9\n");
        assertThatThrownBy(() -> ResumedInput.decide(state, input.toString(), outputs, false, "r2"))
                .isInstanceOf(ResumedInput.RefusedException.class)
                .hasMessageContaining("has format 9, this version reads format 1");
    }
}
