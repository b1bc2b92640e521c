package io.bloomstream.jobs.tools;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.CountingBloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import io.bloomstream.filter.Sizing;
import io.bloomstream.jobs.console.Bytes;
import io.bloomstream.jobs.console.FileErrors;
import io.bloomstream.jobs.console.JsonObjects;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Rates;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code build-filter}: reads a list, one entry a line, and writes a filter file. It streams: the
 * list is read once to count its entries (unless given) and once to add them, so a list of any
 * length needs no more heap than the filter.
 */
@Command(
        name = "build-filter",
        mixinStandardHelpOptions = true,
        description = {
            "Builds a filter file from a list, one entry a line, and prints m, k, bytes and the"
                    + " expected rate.",
            "Lines empty or unusable under the normalization are skipped and counted."
        })
public final class BuildFilterCommand implements Callable<Integer> {

    /** {@link Sizing#MAX_PAGE_PENALTY} in whole percent past classic, for the help. */
    private static final int PAGE_PENALTY_PERCENT =
            (int) (Sizing.MAX_PAGE_PENALTY * 100 - 100 + 0.5);

    /** {@link Sizing#MAX_PAGE_RATE_PENALTY} in whole percent past classic, for the help. */
    private static final int PAGE_RATE_PENALTY_PERCENT =
            (int) (Sizing.MAX_PAGE_RATE_PENALTY * 100 - 100 + 0.5);

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--input", required = true, paramLabel = "FILE", description = "The list.")
    Path input;

    @Option(
            names = "--output",
            required = true,
            paramLabel = "FILTER",
            description = "The filter file to write (replaced atomically).")
    Path output;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Shape shape;

    static final class Shape {
        @ArgGroup(exclusive = false)
        Target target;

        @ArgGroup(exclusive = false)
        Explicit explicit;
    }

    static final class Target {
        @Option(
                names = "--fpp",
                required = true,
                paramLabel = "P",
                converter = Rates.Converter.class,
                description = "Target false-positive rate, in (0, 1): 0.01 or 1%.")
        double fpp;

        @Option(
                names = "--expected-items",
                converter = Counts.Converter.class,
                paramLabel = "N",
                description = "Entries to size for (default: counted in a first pass).")
        Long expectedItems;
    }

    static final class Explicit {
        @Option(
                names = "--bits",
                converter = Counts.Converter.class,
                required = true,
                paramLabel = "M",
                description = "Bits (m).")
        long bits;

        @Option(names = "--hashes", required = true, paramLabel = "K", description = "Hashes (k).")
        int hashes;
    }

    @Option(
            names = "--normalize",
            paramLabel = "MODE",
            description =
                    "none, lowercase (trim and lowercase, the default), email (the address,"
                            + " lowercased) or domain (the part after @).")
    String normalize = "lowercase";

    @Option(
            names = "--counting",
            description = "Write a counting filter (4-bit counters, 4x the bytes) for removals.")
    boolean counting;

    @Option(
            names = "--page-bits",
            paramLabel = "B",
            description =
                    "Page size: a power of two "
                            + FilterSpec.MIN_PAGE_BITS
                            + ".."
                            + FilterSpec.MAX_PAGE_BITS
                            + ", "
                            + FilterSpec.CLASSIC
                            + " classic, "
                            + FilterSpec.AUTO_PAGE_BITS
                            + " automatic (default: with --fpp, at most "
                            + PAGE_PENALTY_PERCENT
                            + "%% more bits than classic; with --bits/--hashes, the rate within "
                            + PAGE_RATE_PENALTY_PERCENT
                            + "%% of classic at the list's length).")
    int pageBits = FilterSpec.AUTO_PAGE_BITS;

    @Option(names = "--seed", paramLabel = "S", description = "XXH3 seed (default the library's).")
    long seed = Hasher.DEFAULT_SEED;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        Normalization normalization = parse(() -> Normalization.parse(normalize));
        String unreadable = FileErrors.unreadable(input);
        if (unreadable != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--input " + input + ": " + unreadable);
        }
        String unwritable = FileErrors.unwritable(output);
        if (unwritable != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--output " + output + ": " + unwritable);
        }
        long[] counts = {0, 0}; // usable, skipped
        FilterSpec filterSpec;
        if (shape.explicit != null) {
            int page = pageBits;
            if (page == FilterSpec.AUTO_PAGE_BITS) {
                // the page that keeps the rate near the classic one at the list's length
                scan(normalization, null, counts);
                long n = Math.max(1, counts[0]);
                page =
                        parse(
                                () ->
                                        Sizing.autoPageBits(
                                                shape.explicit.bits, shape.explicit.hashes, n));
            }
            int chosen = page;
            filterSpec =
                    parse(
                            () ->
                                    FilterSpec.builder()
                                            .bits(shape.explicit.bits)
                                            .hashes(shape.explicit.hashes)
                                            .pageBits(chosen)
                                            .hasher(Hasher.xxh3(seed))
                                            .build());
        } else {
            long n;
            if (shape.target.expectedItems != null) {
                n = shape.target.expectedItems;
            } else {
                scan(normalization, null, counts);
                n = Math.max(1, counts[0]);
            }
            filterSpec =
                    parse(
                            () ->
                                    FilterSpec.builder()
                                            .expectedItems(n)
                                            .fpp(shape.target.fpp)
                                            .pageBits(pageBits)
                                            .hasher(Hasher.xxh3(seed))
                                            .build());
        }
        MembershipFilter filter =
                counting ? CountingBloomFilter.create(filterSpec) : BloomFilter.create(filterSpec);
        scan(normalization, filter, counts);
        Path parent = output.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = newTempFile(parent);
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16)) {
            FilterCodec.write(filter, normalization, out);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(
                tmp, output, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        long bytes = Files.size(output);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("output", output.toString());
            m.put("type", counting ? "counting" : "bloom");
            m.put("normalization", normalization.toString());
            m.put("entries_added", counts[0]);
            m.put("lines_skipped", counts[1]);
            m.put("estimated_items", filter.estimate().estimate());
            m.put("bits", filterSpec.bits());
            m.put("hashes", filterSpec.hashes());
            m.put(
                    "layout",
                    filterSpec.isClassic() ? "classic" : filterSpec.pageBits() + "-bit pages");
            m.put("bytes", bytes);
            m.put("bits_per_entry", Sizing.bitsPerItem(filterSpec.bits(), Math.max(1, counts[0])));
            m.put("items_added", filter.itemsAdded());
            m.put("expected_fpp", filter.expectedFpp());
            m.put(
                    "classic_layout_fpp",
                    Sizing.falsePositiveRate(
                            filterSpec.bits(), filterSpec.hashes(), filter.itemsAdded()));
            JsonObjects.print(out, m);
            return 0;
        }
        out.printf(Locale.ROOT, "wrote             %s%n", output);
        out.printf(Locale.ROOT, "type              %s%n", counting ? "counting" : "bloom");
        out.printf(Locale.ROOT, "normalization     %s%n", normalization);
        out.printf(Locale.ROOT, "entries added     %d%n", counts[0]);
        out.printf(Locale.ROOT, "lines skipped     %d (empty or unusable)%n", counts[1]);
        out.printf(Locale.ROOT, "distinct (est.)   %.0f%n", filter.estimate().estimate());
        out.printf(Locale.ROOT, "bits (m)          %d%n", filterSpec.bits());
        out.printf(Locale.ROOT, "hashes (k)        %d%n", filterSpec.hashes());
        out.printf(
                Locale.ROOT,
                "layout            %s%n",
                filterSpec.isClassic() ? "classic" : filterSpec.pageBits() + "-bit pages");
        out.printf(Locale.ROOT, "bytes             %d (%s)%n", bytes, Bytes.human(bytes));
        out.printf(
                Locale.ROOT,
                "bits per entry    %.3f%n",
                Sizing.bitsPerItem(filterSpec.bits(), Math.max(1, counts[0])));
        out.printf(
                Locale.ROOT,
                "expected fpp      %.4e at %d entries (classic layout, same m and k: %.4e)%n",
                filter.expectedFpp(),
                filter.itemsAdded(),
                Sizing.falsePositiveRate(
                        filterSpec.bits(), filterSpec.hashes(), filter.itemsAdded()));
        out.flush();
        return 0;
    }

    /**
     * A new empty file in {@code dir} for the output before its atomic rename, created with the
     * usual permissions (the umask's, as any file the user writes: a TaskManager running as another
     * user must read it), not {@link Files#createTempFile}'s owner-only 0600.
     */
    static Path newTempFile(Path dir) throws IOException {
        java.util.Random random = new java.security.SecureRandom();
        for (int attempt = 0; ; attempt++) {
            Path p =
                    dir.resolve(
                            ".build-filter-" + Long.toUnsignedString(random.nextLong()) + ".tmp");
            try {
                return Files.createFile(p);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                if (attempt >= 100) {
                    throw e;
                }
            }
        }
    }

    /** Reads the list once; adds each usable entry to {@code filter} if given, else counts. */
    private void scan(Normalization normalization, MembershipFilter filter, long[] counts)
            throws IOException {
        counts[0] = 0;
        counts[1] = 0;
        try (BufferedReader r = Files.newBufferedReader(input, StandardCharsets.UTF_8)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                String entry = normalization.apply(line);
                if (entry == null) {
                    counts[1]++;
                } else {
                    counts[0]++;
                    if (filter != null) {
                        filter.add(entry);
                    }
                }
            }
        }
    }

    private <T> T parse(java.util.function.Supplier<T> s) {
        try {
            return s.get();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
