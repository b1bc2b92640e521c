package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for the checks of the stream commands' flags, made before any job starts. */
class CommandChecksTest {

    @TempDir Path tmp;

    @Test
    void screenRefusesTheSameDirectoryForCleanAndFlaggedRecords() {
        String filter = tmp.resolve("f.bloom").toString();
        String in = tmp.resolve("in.txt").toString();
        String d = tmp.resolve("out").toString();
        for (String[] dirs :
                new String[][] {
                    {d, d}, {d, d + "/"}, {d, tmp.resolve("x/../out").toString()},
                    {d, d + "/flagged"}, {d + "/clean", d}, {d, d + "/_rejected"}
                }) {
            Cli cli = new Cli();
            int status =
                    cli.run(
                            "screen",
                            "--filter",
                            filter,
                            "--input",
                            in,
                            "--output",
                            dirs[0],
                            "--flagged-output",
                            dirs[1]);
            assertThat(status).as(cli.err.toString()).isEqualTo(2);
            assertThat(cli.err.toString())
                    .as(String.join(" ", dirs))
                    .contains("--output " + dirs[0] + " and --flagged-output " + dirs[1])
                    .contains("the clean and flagged records would mix");
        }
    }

    /**
     * {@code --updates FILE} is read once, when the job starts (Flink's file source cannot follow a
     * file as it grows): the help says so, and a Kafka run, the one that could expect live updates,
     * is told to use {@code --control-topic} (issue 29, item 16).
     */
    @Test
    void screenSaysTheUpdatesFileIsReadOnceAndOnlyTheControlTopicIsLive() {
        Cli cli = new Cli();
        assertThat(cli.run("screen", "--help")).isZero();
        String help = cli.out.toString().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("--updates FILE is read once, when the job starts")
                .contains("only --control-topic is live");
        assertThat(ScreenCommand.updatesWarning(true, "cmds.txt"))
                .contains("--updates cmds.txt is read once, when the job starts")
                .contains("use --control-topic");
        assertThat(ScreenCommand.updatesWarning(false, "cmds.txt")).isNull();
        assertThat(ScreenCommand.updatesWarning(true, null)).isNull();
    }

    @Test
    void overlapTellsSeparateDirectoriesFromMixedOnes() {
        assertThat(Commands.overlap("/a/clean", "/a/flagged")).isNull();
        assertThat(Commands.overlap("/a/out", "/a/out2")).isNull();
        assertThat(Commands.overlap("/a/out", "file:///a/out")).isEqualTo("are the same directory");
        assertThat(Commands.overlap("s3://b/out", "s3://b/out/"))
                .isEqualTo("are the same directory");
        assertThat(Commands.overlap("s3://b/out", "s3://c/out")).isNull();
    }
}
