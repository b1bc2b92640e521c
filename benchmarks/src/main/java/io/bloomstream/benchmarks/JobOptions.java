package io.bloomstream.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The command line of {@link JobBenchmark}: {@code --name=value} options, each checked.
 *
 * @param ids the numbers of distinct ids ({@code --ids})
 * @param duplication passes over the ids ({@code --duplication}, a whole number), or {@code 1 / (1
 *     - d)} for {@code --duplicates=d}, the share of the records that are duplicates (0.5: each id
 *     twice; 0.1: the last pass covers one id in nine)
 * @param fpp the Bloom pipelines' target false-positive rate ({@code --fpp})
 * @param backends "hashmap", "rocksdb", "rocksdb-bloom" (RocksDB with {@code
 *     state.backend.rocksdb.use-bloom-filter: true}) ({@code --backends})
 * @param parallelism the job parallelisms ({@code --parallelism})
 * @param pipelines the pipelines, in run order ({@code --pipelines})
 * @param exactBudget the time budget of an exact dedup run ({@code --exact-budget})
 * @param budget the time budget of every other run ({@code --budget})
 * @param csv the CSV file of the runs ({@code --csv}); the Markdown table goes beside it
 * @param rounds rounds of the whole matrix ({@code --rounds}, default 1), the order of the
 *     contenders (backend and pipeline) reversed in even rounds; with more than one a summary of
 *     medians follows the table
 * @param savepointRounds the rounds whose runs end with a savepoint whose size is the state ({@code
 *     --savepoint-rounds}, default all); later runs are cancelled, their state unmeasured
 */
record JobOptions(
        long[] ids,
        double duplication,
        double fpp,
        List<String> backends,
        int[] parallelism,
        List<String> pipelines,
        Duration exactBudget,
        Duration budget,
        Path csv,
        int rounds,
        int savepointRounds,
        List<String> skip) {

    static JobOptions parse(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("arguments are --name=value, was " + arg);
            }
            a.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        List<String> defaultPipelines =
                new ArrayList<>(List.of(JobPipelines.PASS_THROUGH, JobPipelines.BLOOM_DEFAULT));
        JobPipelines.VARIANTS
                .keySet()
                .forEach(v -> defaultPipelines.add(JobPipelines.BLOOM_PREFIX + v));
        defaultPipelines.add(JobPipelines.EXACT);
        JobOptions o =
                new JobOptions(
                        longs(a.remove("ids"), "1000000,10000000,100000000"),
                        duplication(a.get("duplication"), a.get("duplicates")),
                        Double.parseDouble(a.getOrDefault("fpp", "0.01")),
                        List.of(a.getOrDefault("backends", "hashmap,rocksdb").split(",")),
                        Arrays.stream(a.getOrDefault("parallelism", "1,2").split(","))
                                .mapToInt(Integer::parseInt)
                                .toArray(),
                        a.containsKey("pipelines")
                                ? List.of(a.get("pipelines").split(","))
                                : defaultPipelines,
                        duration(a.getOrDefault("exact-budget", "20m")),
                        duration(a.getOrDefault("budget", "4h")),
                        Path.of(a.getOrDefault("csv", "benchmarks/job-throughput.csv")),
                        Integer.parseInt(a.getOrDefault("rounds", "1")),
                        Integer.parseInt(a.getOrDefault("savepoint-rounds", "1000000")),
                        a.containsKey("skip") ? List.of(a.get("skip").split(",")) : List.of());
        for (String k :
                List.of(
                        "duplication",
                        "duplicates",
                        "rounds",
                        "savepoint-rounds",
                        "skip",
                        "fpp",
                        "backends",
                        "parallelism",
                        "pipelines",
                        "exact-budget",
                        "budget",
                        "csv")) {
            a.remove(k);
        }
        if (!a.isEmpty()) {
            throw new IllegalArgumentException("unknown arguments: " + a.keySet());
        }
        o.check();
        return o;
    }

    private void check() {
        for (long n : ids) {
            if (n < 1) {
                throw new IllegalArgumentException("--ids must be >= 1, was " + n);
            }
        }
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds must be >= 1, was " + rounds);
        }
        for (int p : parallelism) {
            if (p < 1 || p > JobBenchmark.MAX_READERS) {
                throw new IllegalArgumentException("--parallelism must be in [1, 64], was " + p);
            }
        }
        for (String b : backends) {
            if (!b.equals("hashmap") && !b.equals("rocksdb") && !b.equals("rocksdb-bloom")) {
                throw new IllegalArgumentException(
                        "--backends: hashmap, rocksdb or rocksdb-bloom, was " + b);
            }
        }
        for (String named : pipelines) {
            String p =
                    named.endsWith(JobPipelines.STRING_IDS)
                            ? named.substring(0, named.length() - JobPipelines.STRING_IDS.length())
                            : named;
            if (!p.equals(JobPipelines.PASS_THROUGH)
                    && !p.equals(JobPipelines.EXACT)
                    && !p.equals(JobPipelines.BLOOM_DEFAULT)
                    && !(p.startsWith(JobPipelines.BLOOM_PREFIX)
                            && JobPipelines.VARIANTS.containsKey(
                                    p.substring(JobPipelines.BLOOM_PREFIX.length())))) {
                throw new IllegalArgumentException(
                        "--pipelines: pass-through, bloom-default, exact or bloom- and one of "
                                + JobPipelines.VARIANTS.keySet()
                                + ", each optionally with :string, was "
                                + named);
            }
        }
    }

    /** Passes over the ids: {@code --duplication=N} (default 2) or {@code --duplicates=d}. */
    static double duplication(String passes, String duplicates) {
        if (passes != null && duplicates != null) {
            throw new IllegalArgumentException("give --duplication or --duplicates, not both");
        }
        if (duplicates != null) {
            double d = Double.parseDouble(duplicates);
            if (!(d >= 0 && d < 1)) {
                throw new IllegalArgumentException("--duplicates must be in [0, 1), was " + d);
            }
            return 1 / (1 - d);
        }
        int n = Integer.parseInt(passes == null ? "2" : passes);
        if (n < 1) {
            throw new IllegalArgumentException("--duplication must be >= 1, was " + n);
        }
        return n;
    }

    private static long[] longs(String value, String defaults) {
        return Arrays.stream((value == null ? defaults : value).split(","))
                .mapToLong(s -> Long.parseLong(s.replace("_", "")))
                .toArray();
    }

    /** An ISO-8601 duration, or a number with s, m or h ("20m"). */
    static Duration duration(String value) {
        String v = value.trim().toUpperCase(Locale.ROOT);
        return Duration.parse(v.startsWith("PT") ? v : "PT" + v);
    }
}
