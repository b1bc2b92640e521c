package io.bloomstream.jobs.console;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.dedup.DedupConfig;
import java.util.Locale;

/**
 * Whether a filter operator of a run was sized right: the fill ratio of its fullest filter (stage),
 * that filter's estimated false-positive rate against the target, the most cascade stages of a key,
 * the state it held (in exact mode its exact entries too, and the reads they cost), and, when a
 * filter went past its capacity, the {@code --expected-items} to use instead.
 */
public final class FilterHealth {

    /** The operator (or filter file) the figures are about. */
    public final String operator;

    /** The fill ratio of the fullest filter: expected ones for dedup, counted bits otherwise. */
    public final double fullestFill;

    /**
     * The estimated false-positive rate of the fullest filter: for dedup, the stage's layout model
     * at its items ({@code bloomEstimatedFpp}); for count, fill^k; for a screen's filter file, the
     * layout's model over the file's own pages ({@link
     * io.bloomstream.filter.BloomFilter#currentFpp()}).
     */
    public final double fullestFpp;

    /** The target rate (of the whole cascade); NaN if unknown. */
    public final double targetFpp;

    /** The most cascade stages of a key (0 if nothing was added). */
    public final int stages;

    /**
     * The filter bytes held (state pages, or the file's bits); -1 if unknown. In exact mode the
     * state holds {@link #exact}'s entries besides.
     */
    public final long stateBytes;

    /** Exact mode's figures, or null without exact mode. */
    public final Exact exact;

    /**
     * How {@link #stateBytes} was obtained, for people; starting with {@code "at most: "} when it
     * is an upper bound (stages of different page sizes).
     */
    public final String stateNote;

    /** The {@code --expected-items} to use, or -1 when the filter stayed within its capacity. */
    public final long suggestedExpectedItems;

    /** The warning to print, or null. */
    public final String warning;

    /**
     * Exact mode's entries and what they cost: {@code entries} ids held (the peak of each subtask,
     * summed: {@code bloomExactEntries}), {@code bytes} their estimated bytes ({@code
     * bloomExactBytes}), {@code reads} the reads of them ({@code bloomExactReads}: every duplicate
     * and every false positive of a filter), {@code falsePositivesCaught} the false positives among
     * them, each a first occurrence that the filter alone would have dropped; {@code what} the
     * entries are ("ids", "URLs").
     */
    public record Exact(
            long entries, long bytes, long reads, long falsePositivesCaught, String what) {}

    FilterHealth(
            String operator,
            double fullestFill,
            double fullestFpp,
            double targetFpp,
            int stages,
            long stateBytes,
            String stateNote,
            long suggestedExpectedItems,
            String warning,
            Exact exact) {
        this.exact = exact;
        this.operator = operator;
        this.fullestFill = fullestFill;
        this.fullestFpp = fullestFpp;
        this.targetFpp = targetFpp;
        this.stages = stages;
        this.stateBytes = stateBytes;
        this.stateNote = stateNote;
        this.suggestedExpectedItems = suggestedExpectedItems;
        this.warning = warning;
    }

    /**
     * The health of a dedup operator from its metrics.
     *
     * @param global one filter over the whole stream, sharded ({@code config.shards()} keys)
     * @param what what the filter holds, for the warning ("ids", "URLs")
     */
    public static FilterHealth dedup(
            LocalMetrics.DedupFigures f, DedupConfig config, boolean global, String what) {
        long perKey =
                global
                        ? io.bloomstream.flink.dedup.BloomDedup.itemsPerShard(
                                config.expectedItems(), config.shards())
                        : config.expectedItems();
        // State: pages of each stage's page size; exact when every stage up to the most stages
        // has the same page size, else a range.
        long low = Long.MAX_VALUE;
        long high = 0;
        for (int i = 0; i < Math.max(1, f.stages); i++) {
            long bytes = pageBytes(config.stageSpec(perKey, i));
            low = Math.min(low, bytes);
            high = Math.max(high, bytes);
        }
        long stateBytes = f.pages * high;
        String note = pagesNote(f.pages, low, high);
        long suggestion = -1;
        String warning = null;
        if (global && !config.hasRetention()) {
            // Shards grow by chance past their share; the total is what the user sized for.
            if (f.passed > config.expectedItems()) {
                suggestion = roundUp(f.passed);
                warning =
                        String.format(
                                Locale.ROOT,
                                "%s passed %,d distinct %s, more than --expected-items %d (its"
                                        + " filters grew to %d cascade stages, costing memory and"
                                        + " speed); use --expected-items %d",
                                f.operator,
                                f.passed,
                                what,
                                config.expectedItems(),
                                f.stages,
                                suggestion);
            }
        } else if (!global && f.stages > 1) {
            long capacity = 0;
            long before = 0;
            long stage = config.expectedItems();
            for (int i = 0; i < f.stages; i++) {
                before = capacity;
                capacity += stage;
                stage *= config.sizing().growthFactor();
            }
            suggestion = roundUp(capacity);
            warning =
                    String.format(
                            Locale.ROOT,
                            "a key of %s held more than its --expected-items %d distinct %s"
                                    + "%s: its filter grew to %d cascade stages (between %,d and"
                                    + " %,d %s); use --expected-items %d",
                            f.operator,
                            config.expectedItems(),
                            what,
                            config.hasRetention() ? " in a retention period" : "",
                            f.stages,
                            before + 1,
                            capacity,
                            what,
                            suggestion);
        }
        if (f.overCapacity > 0 && warning == null) {
            warning =
                    String.format(
                            Locale.ROOT,
                            "%d filters of %s passed their capacity",
                            f.overCapacity,
                            f.operator);
        }
        return new FilterHealth(
                f.operator,
                f.worstFill,
                f.worstFpp,
                config.fpp(),
                f.stages,
                stateBytes,
                note,
                suggestion,
                warning,
                config.exact()
                        ? new Exact(
                                f.exactEntries,
                                f.exactBytes,
                                f.exactReads,
                                f.falsePositivesCaught,
                                what)
                        : null);
    }

    /** The state held: the filters' bytes and, in exact mode, the exact entries' (estimated). */
    public long totalStateBytes() {
        return exact == null || stateBytes < 0 ? stateBytes : stateBytes + exact.bytes;
    }

    /**
     * The health of a count from its estimates: the fullest filter's counted fill and its rate, the
     * most stages, the state pages allocated (as for dedup: from the operator's {@code
     * bloomAllocatedPages}, -1 if unknown) of {@code pageBytesLow} to {@code pageBytesHigh} bytes
     * each, and a warning when a key's estimated distinct count passed the expected items.
     */
    public static FilterHealth count(
            String operator,
            double fullestFill,
            double fullestFpp,
            int stages,
            long pages,
            long pageBytesLow,
            long pageBytesHigh,
            double largestEstimate,
            double largestUpper,
            long expectedItems,
            double fpp) {
        long suggestion = -1;
        String warning = null;
        if (largestEstimate > expectedItems) {
            suggestion = roundUp((long) Math.ceil(largestUpper));
            warning =
                    String.format(
                            Locale.ROOT,
                            "a key of %s held about %,.0f distinct items, more than its"
                                    + " --expected-items %d (its filter grew to %d cascade stages);"
                                    + " use --expected-items %d",
                            operator,
                            largestEstimate,
                            expectedItems,
                            stages,
                            suggestion);
        }
        return new FilterHealth(
                operator,
                fullestFill,
                fullestFpp,
                fpp,
                stages,
                pages < 0 ? -1 : pages * pageBytesHigh,
                pages < 0 ? "unknown" : pagesNote(pages, pageBytesLow, pageBytesHigh),
                suggestion,
                warning,
                null);
    }

    /** The fill above which a filter file is past its capacity: 1/2 at the optimal k, plus 10%. */
    static final double SCREEN_FILL_LIMIT = 0.55;

    /** The health of a screen's filter file (the one in force at the start). */
    public static FilterHealth screen(
            String file, io.bloomstream.filter.MembershipFilter f, long fileBytes) {
        io.bloomstream.filter.Estimate e = f.estimate();
        double current =
                f instanceof io.bloomstream.filter.BloomFilter
                        ? ((io.bloomstream.filter.BloomFilter) f).currentFpp()
                        : f.expectedFpp();
        int stages =
                f instanceof io.bloomstream.filter.ScalableBloomFilter
                        ? ((io.bloomstream.filter.ScalableBloomFilter) f).stages().size()
                        : 1;
        long suggestion = -1;
        String warning = null;
        if (e.fillRatio() > SCREEN_FILL_LIMIT && stages == 1) {
            long estimate = e.valid() ? Math.round(e.estimate()) : Math.max(f.itemsAdded(), 1) * 2;
            suggestion = roundUp(estimate);
            warning =
                    String.format(
                            Locale.ROOT,
                            "filter %s is %.0f%% full (a filter sized for its entries is about half"
                                    + " full): it flags clean records at %.2e; rebuild it with"
                                    + " build-filter --expected-items %d",
                            file,
                            100 * e.fillRatio(),
                            current,
                            suggestion);
        }
        return new FilterHealth(
                "filter file " + file,
                e.fillRatio(),
                current,
                Double.NaN,
                stages,
                fileBytes,
                "file",
                suggestion,
                warning,
                null);
    }

    /**
     * How the state was obtained: {@code pages} pages of {@code low} to {@code high} bytes (the
     * state is then at most pages times high).
     */
    private static String pagesNote(long pages, long low, long high) {
        return low == high
                ? String.format(Locale.ROOT, "%,d pages of %,d bytes", pages, low)
                : String.format(
                        Locale.ROOT, "at most: %,d pages of %,d to %,d bytes", pages, low, high);
    }

    /** The bytes of one state page of a stage: a classic stage is one page of all its bits. */
    public static long pageBytes(FilterSpec spec) {
        return spec.isClassic() ? (spec.bits() + 63) / 64 * 8 : spec.pageBits() / 8;
    }

    /**
     * {@code n} rounded up to two significant digits (11,784 to 12,000): a value to type, at least
     * {@code n}.
     */
    static long roundUp(long n) {
        if (n < 100) {
            return Math.max(1, n);
        }
        long scale = 1;
        while (n / scale >= 100) {
            scale *= 10;
        }
        return (n + scale - 1) / scale * scale;
    }

    /** One line for the text summary. */
    public String line() {
        if (stateNote.equals("file")) {
            return String.format(
                    Locale.ROOT,
                    "%s: %.1f%% full, its fpp %.2e%s; %s",
                    operator,
                    100 * fullestFill,
                    fullestFpp,
                    stages > 1 ? String.format(Locale.ROOT, "; %d cascade stages", stages) : "",
                    Bytes.human(stateBytes));
        }
        StringBuilder s = new StringBuilder();
        s.append(
                String.format(
                        Locale.ROOT,
                        "%s: fullest filter %.1f%% full, its fpp %.2e",
                        operator,
                        100 * fullestFill,
                        fullestFpp));
        if (!Double.isNaN(targetFpp)) {
            s.append(String.format(Locale.ROOT, " (target %s)", targetFpp));
        }
        s.append(
                String.format(Locale.ROOT, "; %d cascade stage%s", stages, stages == 1 ? "" : "s"));
        String atMost = stateNote.startsWith("at most: ") ? "at most " : "";
        String pages = stateNote.replaceFirst("^at most: ", "");
        if (stateBytes >= 0 && exact == null) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "; state %s%s (%s)",
                            atMost,
                            Bytes.human(stateBytes),
                            pages));
        } else if (stateBytes >= 0) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "; state %s%s: filters %s (%s), exact entries %s (%,d %s, about"
                                    + " %,d bytes each, estimated)",
                            atMost,
                            Bytes.human(totalStateBytes()),
                            Bytes.human(stateBytes),
                            pages,
                            Bytes.human(exact.bytes),
                            exact.entries,
                            exact.what,
                            exact.entries == 0
                                    ? 0
                                    : Math.round((double) exact.bytes / exact.entries)));
        }
        if (exact != null) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "; %,d reads of the exact entries (%,d of them false positives of the"
                                    + " filters, each a first occurrence kept)",
                            exact.reads,
                            exact.falsePositivesCaught));
        }
        return s.toString();
    }

    /** Writes the figures as a JSON object. */
    public void json(com.fasterxml.jackson.core.JsonGenerator g) throws java.io.IOException {
        g.writeStartObject();
        g.writeStringField("operator", operator);
        g.writeNumberField("fullest_fill_ratio", fullestFill);
        g.writeNumberField("fullest_fpp", fullestFpp);
        if (Double.isNaN(targetFpp)) {
            g.writeNullField("target_fpp");
        } else {
            g.writeNumberField("target_fpp", targetFpp);
        }
        g.writeNumberField("cascade_stages", stages);
        if (stateBytes >= 0) {
            g.writeNumberField("state_bytes", totalStateBytes());
            g.writeNumberField("filter_bytes", stateBytes);
        } else {
            g.writeNullField("state_bytes");
            g.writeNullField("filter_bytes");
        }
        g.writeStringField("state_note", stateNote);
        g.writeBooleanField("exact", exact != null);
        if (exact != null) {
            g.writeNumberField("exact_entries", exact.entries);
            g.writeNumberField("exact_bytes", exact.bytes);
            g.writeNumberField("exact_reads", exact.reads);
            g.writeNumberField("false_positives_caught", exact.falsePositivesCaught);
        } else {
            g.writeNullField("exact_entries");
            g.writeNullField("exact_bytes");
            g.writeNullField("exact_reads");
            g.writeNullField("false_positives_caught");
        }
        g.writeBooleanField("past_capacity", suggestedExpectedItems >= 0);
        if (suggestedExpectedItems >= 0) {
            g.writeNumberField("suggested_expected_items", suggestedExpectedItems);
        } else {
            g.writeNullField("suggested_expected_items");
        }
        g.writeEndObject();
    }
}
