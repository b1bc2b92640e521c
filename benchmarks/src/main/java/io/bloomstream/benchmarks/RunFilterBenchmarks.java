package io.bloomstream.benchmarks;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Sizing;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link FilterBenchmark} and prints ns/op with the ratios against Guava and against the
 * memory floor measured in the same run, plus bits per item against the classic formula.
 *
 * <p>System properties: {@code forks} (1), {@code iterations} (5), {@code warmups} (3), {@code
 * include} (a JMH regex; by default the issue-13 set: absent-key lookups of every implementation,
 * the aligned adds, the batches, the hash and both floors), {@code xmx} ({@code 8g}: FastFilter
 * builds from an array of all 10^8 keys), {@code xmn} ({@code 256m}: a small young generation stays
 * in memory; with the large default one the allocating baselines, Guava and the XXH3-128 path,
 * swung between 60 and 600 ns per lookup in cache, refaulting eden pages), {@code items}
 * (comma-separated sizes instead of the benchmark's).
 *
 * <p>"ours" is {@code BloomFilter.create(n, p)}, the filter a library user makes; "legacy" is what
 * that made before issue 21 ({@code BloomFilter.create(FilterSpec.forItems(n, p))}). Issue 21's
 * run: {@code -Dinclude='FilterBenchmark\.(guava|ours|legacy|blocked)MightContain(Absent|Member)'}.
 */
public final class RunFilterBenchmarks {

    private RunFilterBenchmarks() {}

    public static void main(String[] args) throws RunnerException {
        int forks = Integer.getInteger("forks", 1);
        int iterations = Integer.getInteger("iterations", 5);
        String include =
                System.getProperty(
                        "include",
                        FilterBenchmark.class.getSimpleName()
                                + "\\.(guava|ours|blocked|blockedAligned|fastFilter)"
                                + "MightContainAbsent|"
                                + FilterBenchmark.class.getSimpleName()
                                + "\\.(blocked.*Batch|blockedAlignedAdd|blockedHashOnly|floor.*)");
        OptionsBuilder builder = new OptionsBuilder();
        if (System.getProperty("items") != null) {
            builder.param("items", System.getProperty("items").split(","));
        }
        Options options =
                builder.include(include)
                        .forks(forks)
                        .warmupIterations(Integer.getInteger("warmups", 3))
                        .warmupTime(org.openjdk.jmh.runner.options.TimeValue.seconds(1))
                        .measurementIterations(iterations)
                        .measurementTime(org.openjdk.jmh.runner.options.TimeValue.seconds(1))
                        .jvmArgsAppend(
                                "-Xmx" + System.getProperty("xmx", "8g"),
                                "-Xmn" + System.getProperty("xmn", "256m"),
                                "-XX:+UseParallelGC")
                        .build();
        Collection<RunResult> results = new Runner(options).run();
        Map<String, Map<String, double[]>> byItems = new TreeMap<>();
        for (RunResult r : results) {
            String items = r.getParams().getParam("items");
            String name = r.getParams().getBenchmark();
            name = name.substring(name.lastIndexOf('.') + 1);
            byItems.computeIfAbsent(items, k -> new TreeMap<>())
                    .put(
                            name,
                            new double[] {
                                r.getPrimaryResult().getScore(),
                                r.getPrimaryResult().getScoreError()
                            });
        }
        System.out.println();
        System.out.println("## FilterBenchmark (ns/op, 99.9% error; ratios in the same run)");
        for (Map.Entry<String, Map<String, double[]>> e : byItems.entrySet()) {
            long n = Long.parseLong(e.getKey());
            Map<String, double[]> m = e.getValue();
            System.out.printf(Locale.ROOT, "%nitems = %,d at p = 1%%%n", n);
            for (Map.Entry<String, double[]> b : m.entrySet()) {
                System.out.printf(
                        Locale.ROOT,
                        "  %-26s %8.2f +- %.2f%n",
                        b.getKey(),
                        b.getValue()[0],
                        b.getValue()[1]);
            }
            ratio(
                    m,
                    "guavaMightContainMember",
                    "oursMightContainMember",
                    "Guava/ours mightContain (member), throughput ratio");
            ratio(
                    m,
                    "guavaMightContainAbsent",
                    "oursMightContainAbsent",
                    "Guava/ours mightContain (absent), throughput ratio");
            ratio(m, "guavaAdd", "oursAdd", "Guava/ours add, throughput ratio");
            ratio(
                    m,
                    "guavaMightContainAbsent",
                    "legacyMightContainAbsent",
                    "Guava/legacy (create before issue 21) mightContain (absent), throughput ratio");
            ratio(
                    m,
                    "guavaMightContainMember",
                    "legacyMightContainMember",
                    "Guava/legacy (create before issue 21) mightContain (member), throughput ratio");
            ratio(
                    m,
                    "blockedMightContainAbsent",
                    "oursMightContainAbsent",
                    "BlockedBloomFilter heap/ours mightContain (absent), throughput ratio");
            ratio(
                    m,
                    "oursHashOnly",
                    "oursMightContainMember",
                    "share of hashing in ours mightContain (member)");
            ratio(
                    m,
                    "oursMightContainMember",
                    "floorRandomRead",
                    "ours mightContain (member) / memory floor, time ratio");
            ratio(m, "oursAdd", "floorRandomRead", "ours add / memory floor, time ratio");
            ratio(
                    m,
                    "oursMightContainMember",
                    "floorDependentRead",
                    "ours mightContain (member) / latency floor (dependent read), time ratio");
            ratio(
                    m,
                    "guavaMightContainMember",
                    "floorDependentRead",
                    "Guava mightContain (member) / latency floor (dependent read), time ratio");
            issue13(m);
            FilterSpec spec = FilterSpec.forItems(n, FilterBenchmark.FPP);
            System.out.printf(
                    Locale.ROOT,
                    "  bits per item %.3f vs classic formula %.3f: %.3fx%n",
                    Sizing.bitsPerItem(spec.bits(), n),
                    Sizing.bitsPerItem(Sizing.optimalBits(n, FilterBenchmark.FPP), n),
                    (double) spec.bits() / Sizing.optimalBits(n, FilterBenchmark.FPP));
        }
    }

    /** Throughput ratios of issue 13 (time of the baseline over time of ours). */
    private static void issue13(Map<String, double[]> m) {
        for (String ours :
                new String[] {"blockedMightContainAbsent", "blockedAlignedMightContainAbsent"}) {
            ratio(m, "guavaMightContainAbsent", ours, "Guava/" + ours + ", throughput ratio");
            ratio(m, "fastFilterMightContainAbsent", ours, "FastFilter/" + ours + ", ratio");
            ratio(
                    m,
                    "legacyMightContainAbsent",
                    ours,
                    "BloomFilter (XXH3-128)/" + ours + ", ratio");
        }
        ratio(m, "guavaMightContainAbsent", "blockedAlignedMightContainBatch", "Guava/batch");
        for (String batch :
                new String[] {"blockedMightContainBatch", "blockedAlignedMightContainBatch"}) {
            ratio(m, batch, "floorRandomRead", batch + " / independent-read floor, time");
            ratio(m, batch, "floorDependentRead", batch + " / dependent-read floor, time");
        }
        ratio(
                m,
                "blockedMightContainAbsent",
                "blockedAlignedMightContainAbsent",
                "heap (straddling) / aligned, single lookup time");
        ratio(
                m,
                "blockedMightContainBatch",
                "blockedAlignedMightContainBatch",
                "heap (straddling) / aligned, batched lookup time");
        ratio(m, "blockedAlignedAdd", "blockedAlignedAddBatch", "single/batched add, time");
        ratio(
                m,
                "blockedHashOnly",
                "blockedAlignedMightContainAbsent",
                "share of hashing in aligned mightContain");
    }

    private static void ratio(Map<String, double[]> m, String num, String den, String label) {
        if (m.containsKey(num) && m.containsKey(den)) {
            System.out.printf(Locale.ROOT, "  %s: %.2fx%n", label, m.get(num)[0] / m.get(den)[0]);
        }
    }
}
