package io.bloomstream.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One measured run of {@link JobBenchmark}: a pipeline on a backend at a parallelism and a number
 * of distinct ids, as a row of the CSV file that {@link JobThroughputChart} reads back.
 *
 * @param distinctIds distinct ids in the input
 * @param duplication passes over the ids (records planned = distinctIds * duplication, rounded; a
 *     fraction: the last pass is partial, {@code --duplicates})
 * @param fpp the Bloom pipelines' target false-positive rate
 * @param backend "hashmap", "rocksdb" or "rocksdb-bloom" (RocksDB with its own bloom filters)
 * @param parallelism the job's parallelism
 * @param pipeline "pass-through", "bloom-default", "bloom-VARIANT" or "exact"
 * @param recordsDone records that entered the pipeline before it was stopped
 * @param seconds from the first to the last of those records
 * @param stateBytes the size of a canonical savepoint taken after them (-1: none)
 * @param recordsInState records taken before the savepoint (more than recordsDone after a stop at
 *     the budget: records keep coming until the savepoint)
 * @param status {@link #COMPLETE}, {@link #STOPPED_AT_BUDGET} or "failed: reason"
 * @param heapBytes live Java heap when the last record was in (after a full collection), less the
 *     live heap before the job started: the heap backend's state and the job's buffers (-1: not
 *     measured, CSVs written before this column)
 * @param rssBytes the process's resident memory at that moment, less before the job: adds what
 *     RocksDB keeps off the heap (-1: not measured)
 */
record JobRun(
        long distinctIds,
        double duplication,
        double fpp,
        String backend,
        int parallelism,
        String pipeline,
        long recordsDone,
        double seconds,
        long stateBytes,
        long recordsInState,
        String status,
        long heapBytes,
        long rssBytes) {

    /** Every record went through. */
    static final String COMPLETE = "complete";

    /** The run hit its time budget: its figures cover the records done so far. */
    static final String STOPPED_AT_BUDGET = "stopped at budget";

    /** The header of CSVs written before the heap and RSS columns: still read (as -1). */
    static final String CSV_HEADER_14 =
            "distinct_ids,duplication,fpp,backend,parallelism,pipeline,records_planned,"
                    + "records_done,seconds,records_per_second,state_bytes,records_in_state,"
                    + "state_bytes_per_distinct_id,status";

    static final String CSV_HEADER = CSV_HEADER_14 + ",heap_bytes,rss_bytes";

    long recordsPlanned() {
        return Math.round(distinctIds * duplication);
    }

    double recordsPerSecond() {
        return seconds > 0 ? recordsDone / seconds : Double.NaN;
    }

    /**
     * State bytes over the distinct ids in the savepoint: all of them once the first pass is done,
     * else about the records taken (the first pass holds each id once, in a scrambled order). NaN
     * without a savepoint.
     */
    double stateBytesPerDistinctId() {
        long seen = Math.min(recordsInState, distinctIds);
        return stateBytes < 0 || seen == 0 ? Double.NaN : (double) stateBytes / seen;
    }

    /** Whether this run is the baseline {@code pipeline} of the same size, backend, parallelism. */
    boolean sameCell(JobRun other) {
        return distinctIds == other.distinctIds
                && backend.equals(other.backend)
                && parallelism == other.parallelism;
    }

    String csvLine() {
        return String.format(
                Locale.ROOT,
                "%d,%s,%s,%s,%d,%s,%d,%d,%.3f,%.1f,%d,%d,%.4f,%s,%d,%d",
                distinctIds,
                duplication,
                fpp,
                backend,
                parallelism,
                pipeline,
                recordsPlanned(),
                recordsDone,
                seconds,
                recordsPerSecond(),
                stateBytes,
                recordsInState,
                stateBytesPerDistinctId(),
                status.replaceAll("[,\\r\\n]+", ";"),
                heapBytes,
                rssBytes);
    }

    static JobRun parse(String line) {
        String[] f = line.split(",", -1);
        if (f.length != 14 && f.length != 16) {
            throw new IllegalArgumentException(
                    "a job benchmark CSV line has 14 or 16 fields, this has "
                            + f.length
                            + ": "
                            + line);
        }
        return new JobRun(
                Long.parseLong(f[0]),
                Double.parseDouble(f[1]),
                Double.parseDouble(f[2]),
                f[3],
                Integer.parseInt(f[4]),
                f[5],
                Long.parseLong(f[7]),
                Double.parseDouble(f[8]),
                Long.parseLong(f[10]),
                Long.parseLong(f[11]),
                f[13],
                f.length > 14 ? Long.parseLong(f[14]) : -1,
                f.length > 14 ? Long.parseLong(f[15]) : -1);
    }

    /** The runs of a CSV file written by {@link JobBenchmark}. */
    static List<JobRun> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        if (lines.isEmpty()
                || !(lines.get(0).equals(CSV_HEADER) || lines.get(0).equals(CSV_HEADER_14))) {
            throw new IOException(
                    csv + " is not a job benchmark CSV: its header is not " + CSV_HEADER);
        }
        List<JobRun> runs = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (!line.isBlank()) {
                runs.add(parse(line));
            }
        }
        return runs;
    }

    /**
     * A Markdown table of {@code runs}, each with its ratios against the pass-through and exact
     * runs of the same size, backend and parallelism ("-" where that baseline was not run).
     */
    static String markdown(List<JobRun> runs) {
        StringBuilder sb = new StringBuilder();
        sb.append("| distinct ids | backend | parallelism | pipeline | records | records/s")
                .append(" | vs pass-through | vs exact | state bytes/distinct id")
                .append(" | heap MiB | RSS MiB | status |\n");
        sb.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (JobRun r : runs) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| %,d | %s | %d | %s | %,d | %,.0f | %s | %s | %.3f | %s | %s | %s |%n",
                            r.distinctIds,
                            r.backend,
                            r.parallelism,
                            r.pipeline,
                            r.recordsDone,
                            r.recordsPerSecond(),
                            ratio(r, runs, JobPipelines.PASS_THROUGH),
                            ratio(r, runs, JobPipelines.EXACT),
                            r.stateBytesPerDistinctId(),
                            mib(r.heapBytes),
                            mib(r.rssBytes),
                            r.status));
        }
        return sb.toString();
    }

    private static String mib(long bytes) {
        return bytes < 0 ? "-" : String.format(Locale.ROOT, "%,.0f", bytes / 1048576.0);
    }

    private static String ratio(JobRun r, List<JobRun> runs, String baseline) {
        String ids = r.pipeline.endsWith(JobPipelines.STRING_IDS) ? JobPipelines.STRING_IDS : "";
        for (JobRun b : runs) {
            if (b.pipeline.equals(baseline + ids) && b.sameCell(r) && b.recordsPerSecond() > 0) {
                return String.format(
                        Locale.ROOT, "%.2fx", r.recordsPerSecond() / b.recordsPerSecond());
            }
        }
        return "-";
    }
}
