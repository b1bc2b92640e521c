package io.bloomstream.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One query's figures on one backend at one size, over the rounds of a {@link SqlBenchmark}
 * invocation: a line of the CSV file it appends to ({@code -Dbench.csv=FILE}) and that {@link
 * SqlGrowthChart} reads back. Several invocations (one per size, say) append to the same file under
 * one header; a file whose header differs is refused, not mixed.
 *
 * <p>Not {@link JobRun}'s format: that holds one run per line (records done and seconds), this the
 * medians and spread of the rounds, as {@link SqlRounds#summarize} prints them.
 *
 * @param rows the input's rows ({@code rows} of the command line; for a query on updating input the
 *     changelog's rows)
 * @param ids the input's distinct ids
 * @param backend the state backend ("hashmap", "rocksdb")
 * @param query the query's name in {@link SqlBenchmark} ("row_number", "bloom_dedup", ...)
 * @param rounds the measured rounds (the warm-up not among them)
 * @param median the median records/s of the rounds
 * @param min the slowest round's records/s
 * @param max the fastest round's records/s
 * @param cpuMicrosPerRow the median CPU time of the process per row, in microseconds
 * @param stateBytes the median size of the canonical savepoint taken after the last row
 * @param peakRssBytes the highest peak resident set of the process over the rounds (-1: unknown)
 * @param status {@link JobRun#COMPLETE}, or {@link JobRun#STOPPED_AT_BUDGET} when a round stopped
 *     at the time budget (its records/s cover the rows done so far)
 */
record SqlMedians(
        long rows,
        long ids,
        String backend,
        String query,
        int rounds,
        double median,
        double min,
        double max,
        double cpuMicrosPerRow,
        long stateBytes,
        long peakRssBytes,
        String status) {

    static final String CSV_HEADER =
            "rows,ids,backend,query,rounds,median_records_per_second,min_records_per_second,"
                    + "max_records_per_second,median_cpu_us_per_row,median_state_bytes,"
                    + "peak_rss_bytes,status";

    private static final int FIELDS = CSV_HEADER.split(",").length;

    /** Whether a round of this line stopped at the time budget. */
    boolean stoppedAtBudget() {
        return status.startsWith(JobRun.STOPPED_AT_BUDGET);
    }

    String csvLine() {
        return String.format(
                Locale.ROOT,
                "%d,%d,%s,%s,%d,%.1f,%.1f,%.1f,%.3f,%d,%d,%s",
                rows,
                ids,
                backend,
                query,
                rounds,
                median,
                min,
                max,
                cpuMicrosPerRow,
                stateBytes,
                peakRssBytes,
                status.replaceAll("[,\\r\\n]+", ";"));
    }

    static SqlMedians parse(String line) {
        String[] f = line.split(",", -1);
        if (f.length != FIELDS) {
            throw new IllegalArgumentException(
                    "a SQL benchmark CSV line has "
                            + FIELDS
                            + " fields, this has "
                            + f.length
                            + ": "
                            + line);
        }
        return new SqlMedians(
                Long.parseLong(f[0]),
                Long.parseLong(f[1]),
                f[2],
                f[3],
                Integer.parseInt(f[4]),
                Double.parseDouble(f[5]),
                Double.parseDouble(f[6]),
                Double.parseDouble(f[7]),
                Double.parseDouble(f[8]),
                Long.parseLong(f[9]),
                Long.parseLong(f[10]),
                f[11]);
    }

    /**
     * The lines of {@code runs}, per backend and query (in the order {@link SqlRounds#summarize}
     * gives): the summary of {@link SqlRounds} with the median savepoint size, the highest peak RSS
     * and whether a round stopped at its budget.
     */
    static List<SqlMedians> of(
            long rows, long ids, List<String> backends, List<SqlBenchmark.Result> results) {
        List<SqlRounds.Run> runs = new ArrayList<>();
        for (SqlBenchmark.Result r : results) {
            runs.add(
                    new SqlRounds.Run(
                            r.backend(),
                            r.query(),
                            r.round(),
                            r.recordsPerSecond(),
                            r.cpuMicrosPerRow()));
        }
        List<SqlMedians> lines = new ArrayList<>();
        for (String backend : backends) {
            for (SqlRounds.Row row : SqlRounds.summarize(runs, backend)) {
                List<SqlBenchmark.Result> mine =
                        results.stream()
                                .filter(
                                        r ->
                                                r.backend().equals(backend)
                                                        && r.query().equals(row.query()))
                                .toList();
                double[] state =
                        mine.stream().mapToDouble(SqlBenchmark.Result::stateBytes).toArray();
                long rss =
                        mine.stream().mapToLong(SqlBenchmark.Result::peakRssBytes).max().orElse(-1);
                boolean stopped = mine.stream().anyMatch(r -> !r.complete());
                lines.add(
                        new SqlMedians(
                                SqlQueries.isUpdating(row.query())
                                        ? UpdatingInput.changelogRows(ids)
                                        : rows,
                                ids,
                                backend,
                                row.query(),
                                row.rounds(),
                                row.median(),
                                row.min(),
                                row.max(),
                                row.medianCpuMicrosPerRow(),
                                Math.round(SqlRounds.median(state)),
                                rss,
                                stopped ? JobRun.STOPPED_AT_BUDGET : JobRun.COMPLETE));
            }
        }
        return lines;
    }

    /**
     * Fails unless {@code csv} is absent, empty or starts with {@link #CSV_HEADER}: checked before
     * a benchmark runs, so that hours of runs do not end in a refused append.
     */
    static void checkAppendable(Path csv) throws IOException {
        if (!Files.exists(csv) || Files.size(csv) == 0) {
            return;
        }
        try (var lines = Files.lines(csv, StandardCharsets.UTF_8)) {
            String first = lines.findFirst().orElse("");
            if (!first.equals(CSV_HEADER)) {
                throw new IOException(
                        csv
                                + " is not a SQL benchmark CSV: its header is '"
                                + first
                                + "', not '"
                                + CSV_HEADER
                                + "'");
            }
        }
    }

    /** Appends {@code lines} to {@code csv}, with the header first if the file is new or empty. */
    static void append(Path csv, List<SqlMedians> lines) throws IOException {
        checkAppendable(csv);
        Path dir = csv.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        StringBuilder sb = new StringBuilder();
        if (!Files.exists(csv) || Files.size(csv) == 0) {
            sb.append(CSV_HEADER).append('\n');
        }
        for (SqlMedians m : lines) {
            sb.append(m.csvLine()).append('\n');
        }
        Files.writeString(
                csv,
                sb,
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    /** The lines of a CSV file written by {@link #append}, in file order. */
    static List<SqlMedians> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).equals(CSV_HEADER)) {
            throw new IOException(
                    csv + " is not a SQL benchmark CSV: its header is not " + CSV_HEADER);
        }
        List<SqlMedians> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (!line.isBlank()) {
                out.add(parse(line));
            }
        }
        return out;
    }
}
