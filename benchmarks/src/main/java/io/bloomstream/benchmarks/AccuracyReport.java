package io.bloomstream.benchmarks;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.filter.Sizing;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The accuracy report: measures, prints Markdown tables and writes PNG charts (XChart) to the
 * directory given as the first argument (default {@code docs}).
 *
 * <ol>
 *   <li>{@code fpp-vs-bits.png}: measured false-positive rate against the theoretical curve over
 *       bits per item, for the classic layout and 512- and 2048-bit pages.
 *   <li>{@code estimate-vs-true.png}: estimated against true distinct count with the 3-sigma band,
 *       for a scalable cascade sized for 10^4 items grown to 10^6.
 *   <li>{@code cascade-growth.png}: bits per item and compound expected rate of the cascade as the
 *       stream grows to 1000x its initial capacity.
 *   <li>{@code bloom-vs-hll.png}: mean relative error of distinct counts against cardinality, at 16
 *       KiB each, for a Bloom filter (k = 7, a 1% dedup filter's shape, and k = 1) and HyperLogLog
 *       (Apache DataSketches, HLL_8, lgK = 14).
 * </ol>
 *
 * <p>Every run uses fixed seeds; the numbers are reproducible.
 */
public final class AccuracyReport {

    private AccuracyReport() {}

    /** Runs the report. */
    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Path dir = Path.of(args.length > 0 ? args[0] : "docs");
        Files.createDirectories(dir);
        fppVersusBits(dir);
        estimateVersusTrue(dir);
        cascadeGrowth(dir);
        bloomVersusHll(dir);
    }

    private static long[] keys(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] k = new long[n];
        for (int i = 0; i < n; i++) {
            k[i] = r.nextLong();
        }
        return k;
    }

    // ---------------------------------------------------------------- 1. rate over bits/item

    static void fppVersusBits(Path dir) throws IOException {
        int n = 20_000;
        int probes = 400_000;
        long[] items = keys(1, n);
        long[] negatives = keys(2, probes);
        int[] layouts = {FilterSpec.CLASSIC, 512, 2048};
        XYChart chart = chart("False-positive rate against bits per item", "bits per item", "rate");
        chart.getStyler().setYAxisLogarithmic(true);
        System.out.println(
                "\n## False-positive rate, measured vs model (n = 20,000, 400,000 probes)\n");
        System.out.println("| bits/item | layout | k | model | measured |");
        System.out.println("| --- | --- | --- | --- | --- |");
        for (int layout : layouts) {
            List<Double> x = new ArrayList<>();
            List<Double> measured = new ArrayList<>();
            List<Double> model = new ArrayList<>();
            for (int bpi = 4; bpi <= 20; bpi += 2) {
                long bits = (long) bpi * n;
                int k = Math.max(1, (int) Math.round(bpi * Math.log(2)));
                FilterSpec spec =
                        FilterSpec.of(round(bits, layout), k, layout, Hasher.defaultHasher());
                BloomFilter f = BloomFilter.create(spec);
                for (long item : items) {
                    f.add(item);
                }
                long fp = 0;
                for (long p : negatives) {
                    if (f.mightContain(p)) {
                        fp++;
                    }
                }
                double rate = (double) fp / probes;
                x.add((double) bpi);
                measured.add(Math.max(rate, 0.5 / probes));
                model.add(spec.expectedFpp(n));
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %s | %d | %.3e | %.3e |%n",
                        bpi,
                        name(layout),
                        k,
                        spec.expectedFpp(n),
                        rate);
            }
            XYSeries m = chart.addSeries(name(layout) + " measured", x, measured);
            m.setMarker(SeriesMarkers.CIRCLE);
            m.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            XYSeries t = chart.addSeries(name(layout) + " model", x, model);
            t.setMarker(SeriesMarkers.NONE);
            t.setLineStyle(new BasicStroke(1.5f));
        }
        List<Double> x = new ArrayList<>();
        List<Double> classic = new ArrayList<>();
        for (double bpi = 4; bpi <= 20; bpi += 0.5) {
            x.add(bpi);
            classic.add(Math.pow(0.5, bpi * Math.log(2))); // optimal k: p = 2^(-m/n ln 2)
        }
        XYSeries c = chart.addSeries("(1/2)^(m/n ln 2), real k", x, classic);
        c.setMarker(SeriesMarkers.NONE);
        c.setLineColor(Color.GRAY);
        save(chart, dir.resolve("fpp-vs-bits.png"));
    }

    private static long round(long bits, int layout) {
        return layout == FilterSpec.CLASSIC ? bits : (bits + layout - 1) / layout * layout;
    }

    private static String name(int layout) {
        return layout == FilterSpec.CLASSIC ? "classic" : layout + "-bit pages";
    }

    // ---------------------------------------------------------------- 2. estimate vs truth

    static void estimateVersusTrue(Path dir) throws IOException {
        ScalableBloomFilter f = ScalableBloomFilter.create(10_000, 0.01);
        SplittableRandom r = new SplittableRandom(3);
        List<Double> truth = new ArrayList<>();
        List<Double> ratio = new ArrayList<>();
        List<Double> lo = new ArrayList<>();
        List<Double> hi = new ArrayList<>();
        System.out.println("\n## Distinct-count estimate of a cascade sized for 10^4 items\n");
        System.out.println("| true n | estimate | 3-sigma interval | stages | within |");
        System.out.println("| --- | --- | --- | --- | --- |");
        long added = 0;
        for (double target = 100; target <= 1_000_001; target *= Math.sqrt(10)) {
            long n = Math.round(target);
            while (added < n) {
                f.add(r.nextLong());
                added++;
            }
            Estimate e = f.estimate();
            truth.add((double) n);
            ratio.add(e.estimate() / n);
            lo.add(e.lower() / n);
            hi.add(e.upper() / n);
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %.0f | [%.0f, %.0f] | %d | %s |%n",
                    n,
                    e.estimate(),
                    e.lower(),
                    e.upper(),
                    f.stages().size(),
                    n >= e.lower() && n <= e.upper() ? "yes" : "NO");
        }
        XYChart chart =
                chart(
                        "Distinct-count estimate / true count (cascade sized for 10^4)",
                        "true distinct count",
                        "estimate / true");
        chart.getStyler().setXAxisLogarithmic(true);
        XYSeries band = chart.addSeries("3-sigma band", truth, hi);
        band.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        band.setMarker(SeriesMarkers.NONE);
        band.setLineColor(Color.LIGHT_GRAY);
        XYSeries low = chart.addSeries("3-sigma band (low)", truth, lo);
        low.setMarker(SeriesMarkers.NONE);
        low.setLineColor(Color.LIGHT_GRAY);
        low.setShowInLegend(false);
        XYSeries est = chart.addSeries("estimate", truth, ratio);
        est.setMarker(SeriesMarkers.CIRCLE);
        save(chart, dir.resolve("estimate-vs-true.png"));
    }

    // ---------------------------------------------------------------- 3. cascade growth

    static void cascadeGrowth(Path dir) throws IOException {
        long initial = 10_000;
        double p = 0.01;
        ScalableBloomFilter f = ScalableBloomFilter.create(initial, p);
        SplittableRandom r = new SplittableRandom(4);
        List<Double> x = new ArrayList<>();
        List<Double> bitsPerItem = new ArrayList<>();
        List<Double> rightSized = new ArrayList<>();
        List<Double> rate = new ArrayList<>();
        System.out.println("\n## Cascade growth (initial capacity 10^4, p = 1%)\n");
        System.out.println(
                "| items | stages | bits/item | right-sized bits/item | expected rate |");
        System.out.println("| --- | --- | --- | --- | --- |");
        long added = 0;
        for (double target = initial; target <= 1000 * initial + 1; target *= Math.sqrt(10)) {
            long n = Math.round(target);
            while (added < n) {
                f.add(r.nextLong());
                added++;
            }
            double bpi = (double) f.bits() / n;
            double right = (double) FilterSpec.forItems(n, p).bits() / n;
            x.add((double) n);
            bitsPerItem.add(bpi);
            rightSized.add(right);
            rate.add(f.expectedFpp());
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %d | %.2f | %.2f | %.4f |%n",
                    n,
                    f.stages().size(),
                    bpi,
                    right,
                    f.expectedFpp());
        }
        XYChart chart =
                chart(
                        "Scalable cascade from 10^4 to 10^7 items at p = 1%",
                        "items added", "bits per item");
        chart.getStyler().setXAxisLogarithmic(true);
        chart.addSeries("cascade bits/item", x, bitsPerItem).setMarker(SeriesMarkers.CIRCLE);
        chart.addSeries("right-sized filter bits/item", x, rightSized)
                .setMarker(SeriesMarkers.NONE);
        XYSeries fpp = chart.addSeries("compound expected rate (right axis)", x, rate);
        fpp.setYAxisGroup(1);
        fpp.setMarker(SeriesMarkers.DIAMOND);
        chart.setYAxisGroupTitle(1, "false-positive rate");
        chart.getStyler()
                .setYAxisGroupPosition(1, org.knowm.xchart.style.Styler.YAxisPosition.Right);
        save(chart, dir.resolve("cascade-growth.png"));
    }

    // ---------------------------------------------------------------- 4. Bloom vs HLL

    static void bloomVersusHll(Path dir) throws IOException {
        int lgK = 14; // HLL_8: 2^14 one-byte registers = 16 KiB
        long bits = 8L * (1 << lgK);
        int trials = 20;
        long[] cardinalities = {
            100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000
        };
        List<Double> x = new ArrayList<>();
        List<Double> bloom7 = new ArrayList<>();
        List<Double> bloom1 = new ArrayList<>();
        List<Double> hll = new ArrayList<>();
        System.out.printf(
                Locale.ROOT,
                "%n## Distinct counts at equal memory (16 KiB), mean |relative error| over %d"
                        + " seeds%n%n",
                trials);
        System.out.println("| true n | Bloom k=7 | Bloom k=1 | HLL_8 lgK=14 | better |");
        System.out.println("| --- | --- | --- | --- | --- |");
        for (long n : cardinalities) {
            double[] err = new double[3];
            int[] invalid = new int[2];
            for (int t = 0; t < trials; t++) {
                BloomFilter b7 =
                        BloomFilter.create(
                                FilterSpec.of(bits, 7, FilterSpec.CLASSIC, Hasher.defaultHasher()));
                BloomFilter b1 =
                        BloomFilter.create(
                                FilterSpec.of(bits, 1, FilterSpec.CLASSIC, Hasher.defaultHasher()));
                HllSketch h = new HllSketch(lgK, TgtHllType.HLL_8);
                SplittableRandom r = new SplittableRandom(1000 + t);
                for (long i = 0; i < n; i++) {
                    long v = r.nextLong();
                    b7.add(v);
                    b1.add(v);
                    h.update(v);
                }
                Estimate e7 = b7.estimate();
                Estimate e1 = b1.estimate();
                err[0] += e7.valid() ? Math.abs(e7.estimate() - n) / n : 1;
                err[1] += e1.valid() ? Math.abs(e1.estimate() - n) / n : 1;
                err[2] += Math.abs(h.getEstimate() - n) / n;
                invalid[0] += e7.valid() ? 0 : 1;
                invalid[1] += e1.valid() ? 0 : 1;
            }
            for (int i = 0; i < 3; i++) {
                err[i] /= trials;
            }
            x.add((double) n);
            bloom7.add(invalid[0] == trials ? Double.NaN : err[0]);
            bloom1.add(invalid[1] == trials ? Double.NaN : err[1]);
            hll.add(err[2]);
            double bestBloom = Math.min(invalid[0] > 0 ? 1 : err[0], invalid[1] > 0 ? 1 : err[1]);
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %s | %s | %.4f | %s |%n",
                    n,
                    invalid[0] > 0 ? "saturated" : String.format(Locale.ROOT, "%.4f", err[0]),
                    invalid[1] > 0 ? "saturated" : String.format(Locale.ROOT, "%.4f", err[1]),
                    err[2],
                    bestBloom < err[2] ? "Bloom" : "HLL");
        }
        XYChart chart =
                chart(
                        "Distinct-count error at 16 KiB: Bloom filter vs HyperLogLog",
                        "true distinct count",
                        "mean |relative error|");
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.addSeries("Bloom k=7 (1% dedup shape)", trim(x, bloom7), trim(bloom7, bloom7));
        chart.addSeries("Bloom k=1 (linear counting)", trim(x, bloom1), trim(bloom1, bloom1));
        chart.addSeries("HLL_8 lgK=14 (DataSketches)", x, hll);
        save(chart, dir.resolve("bloom-vs-hll.png"));
    }

    private static List<Double> trim(List<Double> values, List<Double> mask) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            if (!Double.isNaN(mask.get(i))) {
                out.add(values.get(i));
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- charts

    private static XYChart chart(String title, String x, String y) {
        XYChart chart =
                new XYChartBuilder()
                        .width(800)
                        .height(500)
                        .title(title)
                        .xAxisTitle(x)
                        .yAxisTitle(y)
                        .build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        return chart;
    }

    private static void save(XYChart chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println("\nwrote " + file);
    }

    static double bitsPerItemFloor(double p) {
        return Sizing.lowerBoundBitsPerItem(p);
    }
}
