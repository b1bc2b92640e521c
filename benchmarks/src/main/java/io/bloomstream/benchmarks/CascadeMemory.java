package io.bloomstream.benchmarks;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.ScalableBloomFilter;
import io.bloomstream.filter.Sizing;
import java.util.Locale;

/**
 * Memory of a scalable cascade grown from 10^6 to 10^9 items against a right-sized classic filter
 * for 10^9 items at 1% (the classic formula), for growth s and tightening r, with the automatic
 * page size and with classic stages. Computed from the stage specs (nothing is allocated); the
 * measured compound rate of the defaults is checked by ScalableBloomFilterTest.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar
 * io.bloomstream.benchmarks.CascadeMemory}
 */
public final class CascadeMemory {

    private CascadeMemory() {}

    public static void main(String[] args) {
        double rightSized = Sizing.optimalBits(1_000_000_000L, 0.01);
        System.out.println(
                "| s | r | stages at 1e9 | bits vs right-sized (auto pages) | (classic stages) |");
        System.out.println("| --- | --- | --- | --- | --- |");
        for (int s : new int[] {2, 3, 4}) {
            for (double r : new double[] {0.5, 0.7, 0.8, 0.85, 0.9, 0.95}) {
                double[] auto = bits(s, r, FilterSpec.AUTO_PAGE_BITS);
                double[] classic = bits(s, r, FilterSpec.CLASSIC);
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %.2f | %.0f | %.3fx | %.3fx |%n",
                        s,
                        r,
                        auto[1],
                        auto[0] / rightSized,
                        classic[0] / rightSized);
            }
        }
    }

    private static double[] bits(int s, double r, int pageBits) {
        ScalableBloomFilter f =
                ScalableBloomFilter.create(1_000_000, 0.01, s, r, pageBits, Hasher.defaultHasher());
        double bits = 0;
        double capacity = 0;
        int stages = 0;
        while (capacity < 1e9) {
            bits += spec(f, stages).bits();
            capacity += f.stageCapacity(stages);
            stages++;
        }
        return new double[] {bits, stages};
    }

    private static FilterSpec spec(ScalableBloomFilter f, int stage) {
        return FilterSpec.builder()
                .expectedItems(f.stageCapacity(stage))
                .fpp(f.stageFpp(stage))
                .pageBits(f.pageBits())
                .hasher(f.hasher())
                .build();
    }
}
