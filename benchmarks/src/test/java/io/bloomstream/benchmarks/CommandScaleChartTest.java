package io.bloomstream.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;

/** Tests for {@link CommandScaleChart}. */
class CommandScaleChartTest {

    @TempDir Path dir;

    /** Two sizes, 3 rounds each; awk out of memory at the larger, sort's first round repeated. */
    private static final List<String> CSV =
            List.of(
                    CommandScaleChart.HEADER,
                    "1000000,500000,dedup,1,5.0,400000,499990,ok",
                    "1000000,500000,sort-u,1,1.0,100000,500000,ok",
                    "1000000,500000,awk,1,0.5,80000,500000,ok",
                    "1000000,500000,dedup,2,7.0,410000,499990,ok",
                    "1000000,500000,sort-u,2,2.0,110000,500000,ok",
                    "1000000,500000,awk,2,0.7,81000,500000,ok",
                    "1000000,500000,dedup,3,6.0,420000,499990,ok",
                    "1000000,500000,sort-u,3,3.0,120000,500000,ok",
                    "1000000,500000,awk,3,0.6,82000,500000,ok",
                    "100000000,50000000,dedup,1,60.0,700000,49999000,ok",
                    "100000000,50000000,sort-u,1,90.0,4000000,50000000,ok",
                    "100000000,50000000,awk,1,300.0,11000000,,out-of-memory",
                    // measured again: the later line wins
                    "1000000,500000,sort-u,1,9.0,130000,500000,ok");

    private Path csv() throws IOException {
        return Files.write(dir.resolve("scale.csv"), CSV);
    }

    @Test
    void drawsTheMedianWallTimeOfEachContenderAndMarksAwksFailure() throws Exception {
        XYChart chart = CommandScaleChart.wallChart(CommandScaleChart.read(csv()));

        String awk = "LC_ALL=C awk '!s[$0]++'";
        assertThat(chart.getSeriesMap().keySet())
                .containsExactly(
                        "dedup", "LC_ALL=C sort -u", awk, awk + LogLogChart.STOPPED_SUFFIX);
        XYSeries dedup = chart.getSeriesMap().get("dedup");
        assertThat(dedup.getXData()).containsExactly(1e6, 1e8);
        assertThat(dedup.getYData()).containsExactly(6.0, 60.0);
        // rounds 9.0 (the repeat of round 1), 2.0 and 3.0
        assertThat(chart.getSeriesMap().get("LC_ALL=C sort -u").getYData())
                .containsExactly(3.0, 90.0);
        assertThat(chart.getSeriesMap().get(awk).getYData()).containsExactly(0.6, 300.0);
        XYSeries stopped = chart.getSeriesMap().get(awk + LogLogChart.STOPPED_SUFFIX);
        assertThat(stopped.getXData()).containsExactly(1e8);
        assertThat(chart.getStyler().isXAxisLogarithmic()).isTrue();
        assertThat(chart.getStyler().isYAxisLogarithmic()).isTrue();
    }

    @Test
    void drawsThePeakRssInMebibytes() throws Exception {
        XYChart chart = CommandScaleChart.rssChart(CommandScaleChart.read(csv()));

        assertThat(chart.getSeriesMap().get("dedup").getYData())
                .containsExactly(410000 / 1024.0, 700000 / 1024.0);
    }

    @Test
    void writesBothPngs() throws Exception {
        Path png = dir.resolve("out/cli-scale.png");

        CommandScaleChart.main(new String[] {"--out=" + png, csv().toString()});

        assertThat(Files.readAllBytes(png)).startsWith(0x89, 'P', 'N', 'G');
        assertThat(Files.readAllBytes(dir.resolve("out/cli-scale-rss.png")))
                .startsWith(0x89, 'P', 'N', 'G');
        assertThat(CommandScaleChart.rssPath(Path.of("chart"))).isEqualTo(Path.of("chart-rss"));
    }

    @Test
    void refusesWhatIsNotItsCsv() throws Exception {
        Path other = Files.write(dir.resolve("other.csv"), List.of("a,b", "1,2"));
        assertThatThrownBy(() -> CommandScaleChart.read(other))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a scale.sh CSV");
        Path short_ =
                Files.write(dir.resolve("short.csv"), List.of(CommandScaleChart.HEADER, "1,2"));
        assertThatThrownBy(() -> CommandScaleChart.read(short_))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("line 2: 8 fields expected");
        assertThatThrownBy(() -> CommandScaleChart.wallChart(List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRunUnderTheClocksResolutionIsDrawnAtIt() {
        List<CommandScaleChart.Run> runs =
                List.of(
                        new CommandScaleChart.Run(100_000, "sort-u", 1, 0.0, 7000, "ok"),
                        new CommandScaleChart.Run(100_000, "awk", 1, 0.0, 2000, "out-of-memory"));

        XYChart chart = CommandScaleChart.wallChart(runs);

        assertThat(chart.getSeriesMap().get("LC_ALL=C sort -u").getYData()).containsExactly(0.01);
        String stopped = "LC_ALL=C awk '!s[$0]++'" + LogLogChart.STOPPED_SUFFIX;
        assertThat(chart.getSeriesMap().get(stopped).getYData()).containsExactly(0.01);
    }

    @Test
    void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertThat(CommandScaleChart.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(CommandScaleChart.median(new double[] {5})).isEqualTo(5);
    }
}
