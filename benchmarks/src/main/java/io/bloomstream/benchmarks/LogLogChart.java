package io.bloomstream.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The house style of the throughput charts ({@link JobThroughputChart}, {@link SqlGrowthChart}):
 * 900 x 560 pixels on white, both axes logarithmic, the legend to the right; one line per contender
 * and backend, the heap backend ({@code hashmap}) solid with circles, any other dashed with
 * squares; runs stopped at their time budget marked by a black cross on top of their line.
 */
final class LogLogChart {

    /** The suffix of the series that marks a line's runs stopped at their budget. */
    static final String STOPPED_SUFFIX = ", stopped at budget";

    private LogLogChart() {}

    /** An empty chart with both axes logarithmic. */
    static XYChart create(String title, String xAxisTitle, String yAxisTitle) {
        XYChart chart =
                new XYChartBuilder()
                        .width(900)
                        .height(560)
                        .title(title)
                        .xAxisTitle(xAxisTitle)
                        .yAxisTitle(yAxisTitle)
                        .build();
        Styler styler = chart.getStyler();
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        return chart;
    }

    /** Whether {@code backend} is Flink's heap backend ("hashmap", or "heap"). */
    static boolean isHeap(String backend) {
        return backend.equals("hashmap") || backend.equals("heap");
    }

    /**
     * Adds the line {@code name} in {@code color}, styled by {@code backend} (solid with circles on
     * the heap backend, dashed with squares on any other).
     */
    static XYSeries addLine(
            XYChart chart,
            String name,
            List<Double> x,
            List<Double> y,
            Color color,
            String backend) {
        boolean heap = isHeap(backend);
        XYSeries s = chart.addSeries(name, x, y);
        s.setLineColor(color);
        s.setMarkerColor(color);
        s.setMarker(heap ? SeriesMarkers.CIRCLE : SeriesMarkers.SQUARE);
        if (!heap) {
            s.setLineStyle(
                    new BasicStroke(
                            2f,
                            BasicStroke.CAP_BUTT,
                            BasicStroke.JOIN_MITER,
                            10f,
                            new float[] {6f, 4f},
                            0f));
        }
        return s;
    }

    /**
     * Marks the points of line {@code name} that stopped at their budget with black crosses (a
     * scatter series named {@code name} + {@value #STOPPED_SUFFIX}); nothing when there are none.
     */
    static void markStopped(XYChart chart, String name, List<Double> x, List<Double> y) {
        if (x.isEmpty()) {
            return;
        }
        XYSeries st = chart.addSeries(name + STOPPED_SUFFIX, x, y);
        st.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        st.setMarker(SeriesMarkers.CROSS);
        st.setMarkerColor(Color.BLACK);
    }

    /** Writes {@code chart} as a PNG to {@code out}, creating its directory if needed. */
    static void savePng(XYChart chart, Path out) throws IOException {
        if (out.toAbsolutePath().getParent() != null) {
            Files.createDirectories(out.toAbsolutePath().getParent());
        }
        BitmapEncoder.saveBitmap(chart, out.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
