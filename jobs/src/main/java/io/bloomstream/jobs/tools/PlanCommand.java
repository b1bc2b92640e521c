package io.bloomstream.jobs.tools;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Sizing;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.state.ExactEntrySize;
import io.bloomstream.jobs.console.Bytes;
import io.bloomstream.jobs.console.JsonObjects;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Rates;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code plan}: the sizing calculator. */
@Command(
        name = "plan",
        mixinStandardHelpOptions = true,
        description =
                "Prints bits, hashes, bytes, bits per item and the theoretical rate (with the"
                        + " classic layout's), and what exact dedup in Flink state would cost.")
public final class PlanCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--expected-items",
            converter = Counts.Converter.class,
            required = true,
            paramLabel = "N",
            description = "Distinct items the filter must hold.")
    long expectedItems;

    @Option(
            names = "--fpp",
            required = true,
            paramLabel = "P",
            converter = Rates.Converter.class,
            description = "Target false-positive rate, in (0, 1): 0.01 or 1%%.")
    double fpp;

    @Option(
            names = "--page-bits",
            paramLabel = "B",
            description =
                    "Page size in bits ("
                            + FilterSpec.MIN_PAGE_BITS
                            + ".."
                            + FilterSpec.MAX_PAGE_BITS
                            + ", power of two), "
                            + FilterSpec.CLASSIC
                            + " for classic, "
                            + FilterSpec.AUTO_PAGE_BITS
                            + " for automatic (default).")
    int pageBits = FilterSpec.AUTO_PAGE_BITS;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() {
        FilterSpec filter;
        try {
            filter =
                    FilterSpec.builder()
                            .expectedItems(expectedItems)
                            .fpp(fpp)
                            .pageBits(pageBits)
                            .build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        long classicBits = Sizing.optimalBits(expectedItems, fpp);
        long exact = Math.round(EXACT_DEDUP_BYTES_PER_ID * expectedItems);
        FilterSpec stage = dedupFirstStage(expectedItems, fpp);
        double dedupPerId = dedupStateBytes(stage) / (double) expectedItems;
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("expected_items", expectedItems);
            m.put("target_fpp", fpp);
            m.put("layout", filter.isClassic() ? "classic" : filter.pageBits() + "-bit pages");
            m.put("page_bits", filter.isClassic() ? null : filter.pageBits());
            m.put("pages", filter.pages());
            m.put("bits", filter.bits());
            m.put("hashes", filter.hashes());
            m.put("bytes", Sizing.bytes(filter.bits()));
            m.put("bits_per_item", Sizing.bitsPerItem(filter.bits(), expectedItems));
            m.put("classic_bits_per_item", Sizing.bitsPerItem(classicBits, expectedItems));
            m.put("lower_bound_bits_per_item", Sizing.lowerBoundBitsPerItem(fpp));
            m.put("theoretical_fpp", filter.expectedFpp(expectedItems));
            m.put(
                    "classic_layout_fpp",
                    Sizing.falsePositiveRate(filter.bits(), filter.hashes(), expectedItems));
            m.put("dedup_state_bytes_per_id", dedupPerId);
            m.put("dedup_state_page_bits", stage.isClassic() ? null : stage.pageBits());
            m.put("exact_mode_entry_bytes_heap", ExactEntrySize.onHeap(SAMPLE_ID));
            m.put("exact_mode_entry_bytes_rocksdb", rocksDbEntryBytes(SAMPLE_ID));
            m.put("exact_mode_entry_bytes_heap_uuid", ExactEntrySize.onHeap(SAMPLE_UUID));
            m.put("exact_mode_entry_bytes_rocksdb_uuid", rocksDbEntryBytes(SAMPLE_UUID));
            m.put("exact_dedup_bytes", exact);
            m.put("exact_dedup_bytes_per_id", EXACT_DEDUP_BYTES_PER_ID);
            m.put("exact_dedup_bytes_per_string_id", EXACT_DEDUP_BYTES_PER_STRING_ID);
            JsonObjects.print(out, m);
            return 0;
        }
        out.printf(Locale.ROOT, "expected items    %d%n", expectedItems);
        out.printf(Locale.ROOT, "target fpp        %s%n", fpp);
        out.printf(
                Locale.ROOT,
                "layout            %s%n",
                filter.isClassic()
                        ? "classic (one page)"
                        : filter.pageBits() + "-bit pages x " + filter.pages());
        out.printf(Locale.ROOT, "bits (m)          %d%n", filter.bits());
        out.printf(Locale.ROOT, "hashes (k)        %d%n", filter.hashes());
        out.printf(
                Locale.ROOT,
                "bytes             %d (%s)%n",
                Sizing.bytes(filter.bits()),
                Bytes.human(Sizing.bytes(filter.bits())));
        out.printf(
                Locale.ROOT,
                "bits per item     %.3f (classic formula %.3f, floor log2(1/p) %.3f)%n",
                Sizing.bitsPerItem(filter.bits(), expectedItems),
                Sizing.bitsPerItem(classicBits, expectedItems),
                Sizing.lowerBoundBitsPerItem(fpp));
        out.printf(
                Locale.ROOT,
                "theoretical fpp   %.4e at %d items (classic layout, same m and k: %.4e)%n",
                filter.expectedFpp(expectedItems),
                expectedItems,
                Sizing.falsePositiveRate(filter.bits(), filter.hashes(), expectedItems));
        out.printf(
                Locale.ROOT,
                "dedup state       %.2f bytes per id (BloomDedup, default config: first cascade"
                        + " stage at %.2g, %s; savepoint)%n",
                dedupPerId,
                DedupConfig.DEFAULT_FIRST_STAGE_SHARE * fpp,
                stage.isClassic() ? "one classic page" : stage.pageBits() + "-bit state pages");
        out.printf(
                Locale.ROOT,
                "dedup --exact     the above and an entry per id: %d bytes in heap memory, %d on"
                        + " RocksDB before compression (a %d-character id; a UUID: %d, %d; from the entries' layout,"
                        + " docs/metrics.md)%n",
                ExactEntrySize.onHeap(SAMPLE_ID),
                rocksDbEntryBytes(SAMPLE_ID),
                SAMPLE_ID.length(),
                ExactEntrySize.onHeap(SAMPLE_UUID),
                rocksDbEntryBytes(SAMPLE_UUID));
        out.printf(
                Locale.ROOT,
                "exact dedup       %d bytes (%s) of Flink state, %.1fx the filter%n",
                exact,
                Bytes.human(exact),
                (double) exact / Sizing.bytes(filter.bits()));
        out.printf(
                Locale.ROOT,
                "                  (%.1f bytes per long id in a savepoint, heap or RocksDB;"
                        + " %.1f per string id of 7-8 digits; benchmarks/RESULTS.md)%n",
                EXACT_DEDUP_BYTES_PER_ID,
                EXACT_DEDUP_BYTES_PER_STRING_ID);
        out.flush();
        return 0;
    }

    /** An id of 16 ASCII characters, for exact mode's bytes per id. */
    static final String SAMPLE_ID = "evt-000012345678";

    /** A UUID in its 36-character text form. */
    static final String SAMPLE_UUID = "0b7c5e8e-4b1d-4f0e-9a59-1f6c2b9d7e31";

    /**
     * The bytes of exact mode's entry of {@code id} on RocksDB in global mode (under an int shard
     * key, a 1-byte key-group prefix), before compression.
     */
    static long rocksDbEntryBytes(String id) {
        return ExactEntrySize.serialized(id, Integer.BYTES, 1);
    }

    /**
     * The first cascade stage of a dedup key sized for {@code items} at {@code fpp} with the
     * default config (the stage that holds the expected items; automatic state pages).
     */
    static FilterSpec dedupFirstStage(long items, double fpp) {
        return DedupConfig.builder().expectedItems(items).fpp(fpp).build().stageSpec(items, 0);
    }

    /**
     * Savepoint bytes of a full stage: its pages, each with {@link #STATE_ENTRY_BYTES} besides its
     * bits (a classic stage is one page of all its bits).
     */
    static long dedupStateBytes(FilterSpec stage) {
        long pages = stage.isClassic() ? 1 : stage.pages();
        long pageBytes = stage.isClassic() ? Sizing.bytes(stage.bits()) : stage.pageBits() / 8;
        return pages * (pageBytes + STATE_ENTRY_BYTES);
    }

    /**
     * Bytes a page of Bloom dedup state costs in a canonical savepoint besides its bits (key group,
     * key, page index, lengths): 24.2, measured with {@code JobBenchmark} at 10^7 ids as the
     * difference between 2048-bit and 4096-bit pages of the same bits (issue 21,
     * benchmarks/RESULTS.md). Each key's metadata (about 110 bytes) is not counted here.
     */
    static final int STATE_ENTRY_BYTES = 24;

    /**
     * State bytes per distinct id of exact dedup (a {@code ValueState<Boolean>} per long id): the
     * size of a canonical savepoint over the distinct ids, measured by {@code JobBenchmark} at 10^6
     * and 10^7 ids on the heap and RocksDB backends (19.0 in each case; {@code
     * benchmarks/results/issue-3.md}, "Job level"). In-memory heap size was not measured.
     */
    static final double EXACT_DEDUP_BYTES_PER_ID = 19.0;

    /**
     * The same for string ids (a {@code ValueState<Boolean>} per {@code String} key, the decimal
     * text of ids below 10^7: 7 or 8 characters): 31.4, measured by {@code JobBenchmark} at 10^7
     * string ids on the heap and RocksDB backends (issue 21, benchmarks/RESULTS.md). Longer ids
     * cost more.
     */
    static final double EXACT_DEDUP_BYTES_PER_STRING_ID = 31.4;
}
