package io.bloomstream.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Tests for the refusal of {@link StateDir} when a run's settings differ from the manifest's: the
 * message says what to run, a boolean flag by its presence ("run without --exact").
 */
class StateDirSettingsTest {

    private static final Path DIR = Path.of("/tmp/state");

    private static Properties recorded(Map<String, String> settings) {
        Properties p = new Properties();
        p.setProperty("format", String.valueOf(StateDir.FORMAT));
        p.setProperty("command", "bloomstream dedup");
        settings.forEach(
                (k, v) -> {
                    if (v != null) {
                        p.setProperty(k, v);
                    }
                });
        return p;
    }

    private static Map<String, String> settings(String fpp, boolean exact, String retention) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("--fpp", fpp);
        s.put("--exact", exact ? "true" : null);
        s.put("--retention", retention);
        return s;
    }

    private static String refusal(Map<String, String> then, Map<String, String> now) {
        Throwable t =
                org.assertj.core.api.Assertions.catchThrowable(
                        () -> StateDir.check(DIR, recorded(then), "bloomstream dedup", now));
        assertThat(t).isInstanceOf(StateDir.RefusedException.class);
        return t.getMessage();
    }

    @Test
    void aBooleanFlagIsNamedByItsPresence() {
        assertThat(refusal(settings("0.01", false, null), settings("0.01", true, null)))
                .isEqualTo(
                        "--state-dir /tmp/state was written without --exact, this run has"
                                + " --exact: its state would not match. Run without --exact, or"
                                + " start over with a new (or empty) directory");
        assertThat(refusal(settings("0.01", true, null), settings("0.01", false, null)))
                .isEqualTo(
                        "--state-dir /tmp/state was written with --exact, this run is without"
                                + " --exact: its state would not match. Run with --exact, or start"
                                + " over with a new (or empty) directory")
                .doesNotContain("(not set)");
    }

    @Test
    void aValuedSettingKeepsItsValue() {
        assertThat(refusal(settings("0.01", false, null), settings("0.02", false, null)))
                .startsWith(
                        "--state-dir /tmp/state was written with --fpp 0.01, this run has --fpp"
                                + " 0.02: its state would not match. Run with --fpp 0.01, or");
        assertThat(refusal(settings("0.01", false, "PT24H"), settings("0.01", false, null)))
                .startsWith(
                        "--state-dir /tmp/state was written with --retention PT24H, this run is"
                                + " without --retention: its state would not match. Run with"
                                + " --retention PT24H, or");
    }

    @Test
    void equalSettingsPass() throws Exception {
        StateDir.check(
                DIR,
                recorded(settings("0.01", true, null)),
                "bloomstream dedup",
                settings("0.01", true, null));
        assertThatThrownBy(
                        () ->
                                StateDir.check(
                                        DIR,
                                        recorded(settings("0.01", true, null)),
                                        "bloomstream frontier",
                                        settings("0.01", true, null)))
                .isInstanceOf(StateDir.RefusedException.class);
    }
}
