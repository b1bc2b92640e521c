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
import io.bloomstream.jobs.io.Utf8LineFormat;
import io.bloomstream.jobs.io.Utf8Lines;
import java.io.BufferedOutputStream;
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
 * {@code build-filter}: reads a list, one entry a line, and writes a filter file. It streams: a
 * list file is read once to count its entries (unless given) and once to add them, so a list of any
 * length needs no more heap than the filter. A pipe ({@code <(zcat list.gz)}, {@code /dev/stdin}, a
 * FIFO), which can be read only once, is read once: its usable entries go to a hidden temporary
 * file next to the output while they are counted, and are added from there. Lines are capped
 * ({@code --max-line-bytes}); temporary files are deleted on failure and on Ctrl-C; a file far
 * larger than the list needs is refused unless {@code --allow-oversized}.
 */
@Command(
        name = "build-filter",
        mixinStandardHelpOptions = true,
        description = {
            "Builds a filter file from a list, one entry a line, and prints m, k, bytes and the"
                    + " expected rate.",
            "Lines empty or unusable under the normalization, longer than --max-line-bytes or not"
                    + " UTF-8 are skipped and counted."
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
                description = "Target false-positive rate, in (0, 1): 0.01 or 1%%.")
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

    @CommandLine.Mixin KeyOptions key;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Option(
            names = "--max-line-bytes",
            converter = Counts.Converter.class,
            paramLabel = "N",
            description =
                    "The longest line read, in bytes (default 1048576, 1 MiB); a longer one is"
                            + " skipped and counted, with a warning.")
    long maxLineBytes = Utf8Lines.DEFAULT_MAX_LINE_BYTES;

    @Option(
            names = "--allow-oversized",
            description =
                    "Write a file over 64 MiB with more than 1000 bits per entry of the list"
                            + " (refused without it: such a size is a mistake).")
    boolean allowOversized;

    /** Files at most this large are never refused as oversized (64 MiB). */
    static final long OVERSIZED_BYTES = 64L << 20;

    /** More bits per entry than this is never useful: the rate is below 1e-200 for any k. */
    static final long OVERSIZED_BITS_PER_ENTRY = 1000;

    @Override
    public Integer call() throws IOException {
        Normalization normalization = parse(() -> Normalization.parse(normalize));
        int cap = parse(() -> Utf8Lines.checkCap(maxLineBytes));
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
        // created (if missing) with the first temporary file, once the arguments are checked
        Path parent = output.toAbsolutePath().getParent();
        try (TempFiles temp = new TempFiles()) {
            return build(normalization, cap, parent, temp);
        }
    }

    private int build(Normalization normalization, int cap, Path parent, TempFiles temp)
            throws IOException {
        Hasher chosenHasher = key.hasher(spec.commandLine(), seed);
        boolean sizeFromList =
                shape.explicit != null
                        ? pageBits == FilterSpec.AUTO_PAGE_BITS
                        : shape.target.expectedItems == null;
        Scan scan = null;
        Path entries = null; // a pipe's usable entries, normalized, one a line
        if (sizeFromList) {
            if (Files.isRegularFile(input)) {
                scan = scan(input, cap, normalization, entry -> {});
            } else {
                // a pipe (<(zcat list.gz), /dev/stdin, a FIFO) can be read once: keep its entries,
                // owner-only (the list in plain text: for a keyed file, what the key hides)
                entries = temp.createPrivate(parent, "entries");
                try (java.io.Writer w =
                        new java.io.OutputStreamWriter(
                                new BufferedOutputStream(TempFiles.open(entries), 1 << 16),
                                StandardCharsets.UTF_8)) {
                    scan =
                            scan(
                                    input,
                                    cap,
                                    normalization,
                                    entry -> {
                                        w.write(entry);
                                        w.write('\n');
                                    });
                }
            }
        }
        long n = scan == null ? 0 : Math.max(1, scan.entries);
        FilterSpec filterSpec;
        if (shape.explicit != null) {
            int page =
                    pageBits != FilterSpec.AUTO_PAGE_BITS
                            ? pageBits
                            // the page that keeps the rate near the classic one at the list's
                            // length
                            : parse(
                                    () ->
                                            Sizing.autoPageBits(
                                                    shape.explicit.bits, shape.explicit.hashes, n));
            filterSpec =
                    parse(
                            () ->
                                    FilterSpec.builder()
                                            .bits(shape.explicit.bits)
                                            .hashes(shape.explicit.hashes)
                                            .pageBits(page)
                                            .hasher(chosenHasher)
                                            .build());
        } else {
            long items = shape.target.expectedItems != null ? shape.target.expectedItems : n;
            filterSpec =
                    parse(
                            () ->
                                    FilterSpec.builder()
                                            .expectedItems(items)
                                            .fpp(shape.target.fpp)
                                            .pageBits(pageBits)
                                            .hasher(chosenHasher)
                                            .build());
        }
        boolean counted = scan != null; // the list's length is known: refuse before adding
        if (counted) {
            refuseOversized(filterSpec, scan.entries);
        }
        MembershipFilter filter =
                counting ? CountingBloomFilter.create(filterSpec) : BloomFilter.create(filterSpec);
        if (entries != null) {
            try (var r =
                    new Utf8LineFormat.LineReader(
                            Files.newInputStream(entries), null, Utf8Lines.MAX_MAX_LINE_BYTES)) {
                for (String entry = r.read(); entry != null; entry = r.read()) {
                    filter.add(entry);
                }
            }
        } else {
            scan = scan(input, cap, normalization, filter::add);
        }
        scan.warn(spec.commandLine().getErr(), cap);
        if (!counted) {
            refuseOversized(filterSpec, scan.entries);
        }
        Path tmp = temp.create(parent, "tmp");
        try (OutputStream out = new BufferedOutputStream(TempFiles.open(tmp), 1 << 16)) {
            FilterCodec.write(filter, normalization, out);
        }
        Files.move(
                tmp, output, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        temp.keep(tmp);
        long[] counts = {scan.entries, scan.skipped};
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
        out.printf(
                Locale.ROOT,
                "lines skipped     %d (empty, unusable, too long or not UTF-8)%n",
                counts[1]);
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

    /** What reading the list found. */
    private static final class Scan {
        long entries; // usable, added
        long skipped; // empty, unusable under the normalization, not UTF-8 or too long
        long tooLong;
        long firstTooLong; // its line number, from 1
        long firstTooLongBytes;
        long notUtf8;
        long firstNotUtf8;
        String firstNotUtf8Reason;

        /** Warns of the lines skipped as unreadable, naming the first of each kind. */
        void warn(PrintWriter err, int cap) {
            if (tooLong > 0) {
                err.printf(
                        Locale.ROOT,
                        "warning: skipped %d %s longer than --max-line-bytes %d (the first: line"
                                + " %d, %d bytes)%n",
                        tooLong,
                        tooLong == 1 ? "line" : "lines",
                        cap,
                        firstTooLong,
                        firstTooLongBytes);
            }
            if (notUtf8 > 0) {
                err.printf(
                        Locale.ROOT,
                        "warning: skipped %d %s not UTF-8 (the first: line %d, %s)%n",
                        notUtf8,
                        notUtf8 == 1 ? "line" : "lines",
                        firstNotUtf8,
                        firstNotUtf8Reason);
            }
            err.flush();
        }
    }

    /** Where {@link #scan} puts each usable entry. */
    @FunctionalInterface
    private interface EntrySink {
        void accept(String entry) throws IOException;
    }

    /**
     * Reads the list once, lines capped at {@code cap} bytes (a longer one, or one that is not
     * UTF-8, is skipped and counted, never held), and gives each usable entry to {@code sink}.
     */
    private static Scan scan(Path list, int cap, Normalization normalization, EntrySink sink)
            throws IOException {
        Scan scan = new Scan();
        long number = 0;
        try (var r = new Utf8LineFormat.LineReader(Files.newInputStream(list), null, cap)) {
            for (String line = r.read(); line != null; line = r.read()) {
                number++;
                if (Utf8Lines.unreadable(line)) {
                    scan.skipped++;
                    if (line.startsWith(Utf8Lines.TOO_LONG)) {
                        if (scan.tooLong++ == 0) {
                            scan.firstTooLong = number;
                            scan.firstTooLongBytes = Utf8Lines.length(line);
                        }
                    } else if (scan.notUtf8++ == 0) {
                        scan.firstNotUtf8 = number;
                        scan.firstNotUtf8Reason = Utf8Lines.reason(line);
                    }
                    continue;
                }
                String entry = normalization.apply(line);
                if (entry == null) {
                    scan.skipped++;
                } else {
                    scan.entries++;
                    sink.accept(entry);
                }
            }
        }
        return scan;
    }

    /**
     * Refuses, unless {@code --allow-oversized}, a file over {@value #OVERSIZED_BYTES} bytes with
     * more than {@value #OVERSIZED_BITS_PER_ENTRY} bits per entry of the list: past that the rate
     * is below 1e-200 for any k, so the size is a mistake ({@code --bits 1T} for a three-line list
     * started a 116 GiB write).
     */
    private void refuseOversized(FilterSpec filterSpec, long entries) {
        long fileBytes = fileBytes(filterSpec, entries);
        long perEntry = filterSpec.bits() / Math.max(1, entries);
        if (allowOversized
                || fileBytes <= OVERSIZED_BYTES
                || perEntry <= OVERSIZED_BITS_PER_ENTRY) {
            return;
        }
        String flag =
                shape.explicit != null
                        ? "--bits " + filterSpec.bits()
                        : "--expected-items " + shape.target.expectedItems;
        throw new CommandLine.ParameterException(
                spec.commandLine(),
                String.format(
                        Locale.ROOT,
                        "%s for %d %s is %d bits per entry: the file would take %s, and more than"
                                + " %d bits per entry is never useful (a rate below 1e-200);"
                                + " size for the list (--fpp alone counts it), or pass"
                                + " --allow-oversized to write it anyway",
                        flag,
                        entries,
                        entries == 1 ? "entry" : "entries",
                        perEntry,
                        Bytes.human(fileBytes),
                        OVERSIZED_BITS_PER_ENTRY));
    }

    /**
     * About the bytes of the file's body: dense (the bits, 4 per counter for a counting filter),
     * or, paged, sparse when that is smaller (each page an item may set, with its index).
     */
    private long fileBytes(FilterSpec filterSpec, long entries) {
        long dense = filterSpec.bits() / 8 * (counting ? 4 : 1);
        if (filterSpec.isClassic()) {
            return dense;
        }
        long pageBytes = (long) filterSpec.pageBits() / 8 * (counting ? 4 : 1);
        long pages =
                Math.min(filterSpec.bits() / filterSpec.pageBits(), entries * filterSpec.hashes());
        return Math.min(dense, 4 + pages * (4 + pageBytes));
    }

    private <T> T parse(java.util.function.Supplier<T> s) {
        try {
            return s.get();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
