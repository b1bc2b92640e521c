package io.bloomstream.benchmarks;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Sizing;
import java.util.Locale;

/**
 * The false-positive penalty of each page size against the classic layout, measured. For each
 * target p: (1) the rate measured at the classic m and k with pages of each size, against the
 * classic layout at the same m and k; (2) the bits per item that paged sizing needs to reach p,
 * against the classic formula. n = 10^6 members, 4 * 10^6 disjoint probes, seed 7.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.PageSizeSweep}
 */
public final class PageSizeSweep {

    private static final int N = 1_000_000;
    private static final int PROBES = 4_000_000;

    private PageSizeSweep() {}

    public static void main(String[] args) {
        for (double p : new double[] {0.01, 0.001, 0.0001}) {
            long[] classic = Sizing.sizeClassic(N, p);
            double classicFormula = Sizing.bitsPerItem(Sizing.optimalBits(N, p), N);
            System.out.printf(
                    Locale.ROOT,
                    "%n### p = %s (classic m/n = %.3f, k = %d; formula %.3f bits/item)%n%n",
                    p,
                    (double) classic[0] / N,
                    classic[1],
                    classicFormula);
            System.out.println(
                    "| page bits | measured rate at classic m, k | vs classic layout | bits/item"
                            + " sized for p | k | vs classic formula |");
            System.out.println("| --- | --- | --- | --- | --- | --- |");
            double classicRate = measure(FilterSpec.CLASSIC, classic[0], (int) classic[1]);
            row(
                    "classic",
                    classicRate,
                    classicRate,
                    (double) classic[0] / N,
                    (int) classic[1],
                    classicFormula);
            for (int page = 64; page <= 8192; page *= 2) {
                long m = (classic[0] + page - 1) / page * page;
                double rate = measure(page, m, (int) classic[1]);
                long[] sized = Sizing.sizePaged(N, p, page);
                row(
                        Integer.toString(page),
                        rate,
                        classicRate,
                        (double) sized[0] / N,
                        (int) sized[1],
                        classicFormula);
            }
        }
    }

    private static void row(
            String page,
            double rate,
            double classicRate,
            double bitsPerItem,
            int k,
            double formula) {
        System.out.printf(
                Locale.ROOT,
                "| %s | %.3e | %.3fx | %.3f | %d | %.3fx |%n",
                page,
                rate,
                rate / classicRate,
                bitsPerItem,
                k,
                bitsPerItem / formula);
    }

    private static double measure(int pageBits, long bits, int hashes) {
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder()
                                .bits(bits)
                                .hashes(hashes)
                                .pageBits(pageBits)
                                .hasher(Hasher.xxh3(7))
                                .build());
        for (long i = 0; i < N; i++) {
            f.add(i);
        }
        long fp = 0;
        for (long i = 0; i < PROBES; i++) {
            if (f.mightContain((1L << 40) + i)) {
                fp++;
            }
        }
        return (double) fp / PROBES;
    }
}
