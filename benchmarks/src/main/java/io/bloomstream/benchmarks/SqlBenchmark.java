package io.bloomstream.benchmarks;

import static io.bloomstream.benchmarks.SqlQueries.EVENT_TIME;
import static io.bloomstream.benchmarks.SqlQueries.UPDATING;
import static io.bloomstream.benchmarks.SqlQueries.UPDATING_FPP_PROPERTY;
import static io.bloomstream.benchmarks.SqlQueries.sql;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;

/**
 * SQL benchmark: the queries a user writes, through the same SQL path in one run, on the given
 * state backends: {@code BLOOM_DEDUP} against Flink's keep-first {@code ROW_NUMBER} deduplication
 * (also with {@code table.exec.state.ttl} set, as users bound its state), and {@code
 * BLOOM_COUNT_DISTINCT} against {@code COUNT(DISTINCT)} in a {@code GROUP BY} of {@value
 * SqlQueries#GROUPS} groups. Runs every query once per round, for {@code rounds} rounds (default
 * {@value #DEFAULT_ROUNDS}), the order alternating from one round to the next ({@link
 * SqlRounds#order}); prints each run (records/s, the ratio to the exact query of the same backend
 * and round, the state bytes of a canonical savepoint taken once every record was processed, the
 * machine's load average), then per query the median records/s of the rounds, their min-max spread,
 * and the ratio of the medians to {@code row_number} (or {@code count_distinct}) and to {@code
 * row_number_ttl} when it ran ({@link SqlRounds#summarize}).
 *
 * <p>Input: {@code rows} generated ids ({@link DataGeneratorSource}, not rate-limited) as STRING
 * ({@code id}, the decimal of a scrambled 64-bit number {@code x}; {@code ids} distinct, in passes
 * over the same order), plus {@code x} and a processing-time attribute. Every query runs in
 * streaming mode at parallelism 1 with mini-batch on (1 s, 5,000 rows, as Flink's tuning guide
 * recommends) and checkpoints every 10 s to a filesystem directory. Throughput is measured where
 * records enter the pipeline (backpressure makes that the pace of the slowest operator), first to
 * last record: start-up and planning are not in it. Each query first runs once at a tenth of the
 * size, unreported (JIT warm-up). The {@code BLOOM_DEDUP} query is the documented one, in one place
 * ({@link SqlQueries#SHARDED_VIEW}, {@link SqlQueries#bloomDedup}).
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.SqlBenchmark
 * [rows] [ids] [backends] [queries] [rounds]}, e.g. {@code 1000000 500000 hashmap,rocksdb
 * row_number,bloom_dedup,row_number_ttl 3}. A query named with {@code _ttl} runs with {@code
 * table.exec.state.ttl} set ({@code row_number_ttl}); one with {@code _1p} ({@code
 * count_distinct_1p}, {@code bloom_count_distinct_1p}) with {@code
 * table.optimizer.agg-phase-strategy: ONE_PHASE}; {@code bloom_dedup_whole} is {@code BLOOM_DEDUP}
 * without {@code PARTITION BY} (the whole input on one task); {@code bloom_dedup_exact} is the
 * documented query with {@code exact => TRUE}; {@value SqlQueries#TABLE_API_DEDUP} is no query but
 * the Java Table pipeline of {@link SqlQueries#tableApiDedup} (the DataStream operator through
 * {@code BloomDedupTables}). {@code -Dbench.flink.KEY=VALUE} sets a Flink option for every query
 * (for example {@code -Dbench.flink.execution.checkpointing.incremental=true}). {@code
 * -Dbench.csv=FILE} appends each query's medians to a CSV file after the last round ({@link
 * SqlMedians}, read by {@link SqlGrowthChart}); {@code -Dbench.budget=90m} is the time budget of
 * one run, past which it is stopped and reported at the rows it took, marked "stopped at budget".
 *
 * <p>On updating input: {@code count_distinct_updating} ({@code COUNT(DISTINCT id)}) and {@code
 * bloom_count_distinct_updating} (the counting form, {@code BLOOM_COUNT_DISTINCT(id, perGroup,
 * 0.01, 'retract')}), with {@code _1p} variants, read in place of {@code events} a generated
 * retract changelog of {@code 3 * ids} rows that leaves {@code ids} distinct values ({@link
 * UpdatingInput}; {@code rows} does not apply), over the same groups; their records/s count
 * changelog rows, and they are compared with {@code count_distinct_updating}. {@code
 * -Dbench.updatingFpp=P} sets the fpp of {@code bloom_count_distinct_updating} (0.01 unless set).
 *
 * <p>By event time (issue 40): the queries named {@code *}{@value SqlQueries#EVENT_TIME} read
 * {@code events} with a rowtime {@code ts} in place of {@code pt}: row i's time is i ms plus a
 * jitter uniform in [0, D) ms (fixed per row, D {@code -Dbench.disorderMs}, {@value
 * #DEFAULT_DISORDER_MS} unless set), under the watermark {@code ts - D ms}, so that rows come in
 * bounded disorder and none is late. {@code row_number_et} is {@code ROW_NUMBER() OVER (PARTITION
 * BY id ORDER BY ts)} keep-first, the baseline of the others: {@code bloom_dedup_et} (the
 * documented sharded query with {@code on_time => DESCRIPTOR(ts)}, so by default {@code first_by =>
 * 'EVENT_TIME'}), {@code bloom_dedup_whole_et} (the same without {@code PARTITION BY}) and {@code
 * bloom_dedup_arrival_et} (the sharded query with {@code first_by => 'ARRIVAL'}: no rows wait for
 * the watermark). They run without mini-batch, where Flink's {@code ROW_NUMBER} keep-first by a
 * rowtime is insert-only and emitted at the watermark; {@code row_number_mb_et} is the same query
 * with mini-batch on, where Flink plans it as an updating rank. The input stops at its last row
 * without a final watermark: a first row within D of the end is not returned by either kind, and
 * with each id's first occurrence in the first pass no first row is there.
 */
public final class SqlBenchmark {

    /** System properties {@code bench.flink.KEY=VALUE} set the Flink option KEY for every query. */
    static final String FLINK_OPTION_PREFIX = "bench.flink.";

    /** Rounds when the command line names none. */
    static final int DEFAULT_ROUNDS = 3;

    /**
     * The bound of the event-time input's disorder in ms, when {@code bench.disorderMs} is unset.
     */
    static final long DEFAULT_DISORDER_MS = 1000;

    /** The system property that sets the event-time input's disorder bound D in ms. */
    static final String DISORDER_PROPERTY = "bench.disorderMs";

    /**
     * The system property that appends each query's medians to a CSV file ({@link SqlMedians}), one
     * line per backend and query, after the last round.
     */
    static final String CSV_PROPERTY = "bench.csv";

    /**
     * The system property that sets the time budget of one run ({@code 90m} unless set; an ISO-8601
     * duration or a number with s, m or h): a run that has not taken all its rows by then is
     * stopped and reported at the rows it took, marked "stopped at budget".
     */
    static final String BUDGET_PROPERTY = "bench.budget";

    /** The budget of one run when {@link #BUDGET_PROPERTY} is unset. */
    static final String DEFAULT_BUDGET = "90m";

    private SqlBenchmark() {}

    /**
     * One measured run ({@code round} 0: the warm-up); {@code load} the 1-minute load average;
     * {@code complete} false when the run stopped at its budget ({@link #BUDGET_PROPERTY}), {@code
     * records} then the rows done so far.
     */
    record Result(
            String query,
            String backend,
            int round,
            long records,
            double seconds,
            long stateBytes,
            long out,
            String load,
            long cpuNanos,
            long peakRssBytes,
            boolean complete) {
        double recordsPerSecond() {
            return records / seconds;
        }

        double cpuMicrosPerRow() {
            return cpuNanos / 1e3 / records;
        }
    }

    /** The disorder bound D of the event-time input, in ms ({@link #DISORDER_PROPERTY}). */
    static long disorderMs() {
        long d = Long.parseLong(System.getProperty(DISORDER_PROPERTY, "" + DEFAULT_DISORDER_MS));
        if (d < 1 || d >= 100_000) {
            throw new IllegalArgumentException(
                    DISORDER_PROPERTY + ": must be in [1, 100000) ms, got " + d);
        }
        return d;
    }

    /**
     * The event time of row {@code index}, in ms: the index plus a jitter in [0, {@code
     * disorderMs}) fixed per row (a 64-bit mix of the index, SplitMix64's finalizer).
     */
    static long eventTimeOf(long index, long disorderMs) {
        long z = (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return index + Math.floorMod(z, disorderMs);
    }

    /**
     * Runs the benchmark of {@code args}; on any failure exits the JVM with status 1, for a job
     * left running (a failed savepoint, say) would keep it alive and a script waiting.
     */
    public static void main(String[] args) {
        try {
            benchmark(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void benchmark(String[] args) throws Exception {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        long ids = args.length > 1 ? Long.parseLong(args[1]) : rows / 2;
        String[] backends = (args.length > 2 ? args[2] : "hashmap").split(",");
        List<String> queries =
                List.of(
                        (args.length > 3
                                        ? args[3]
                                        : "row_number,bloom_dedup,count_distinct,bloom_count_distinct")
                                .split(","));
        int rounds = args.length > 4 ? Integer.parseInt(args[4]) : DEFAULT_ROUNDS;
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds: must be at least 1, got " + rounds);
        }
        for (String q : queries) {
            sql(q, ids); // an unknown query fails before any run
        }
        Duration budget = JobOptions.duration(System.getProperty(BUDGET_PROPERTY, DEFAULT_BUDGET));
        String csvName = System.getProperty(CSV_PROPERTY);
        Path csv = csvName == null ? null : Path.of(csvName);
        if (csv != null) {
            SqlMedians.checkAppendable(csv); // a foreign file fails before any run
        }
        // Warm-up (not reported): each query once at a tenth of the size, so that the first
        // measured query does not pay for the JIT alone.
        for (String q : queries) {
            SqlRun.run(q, backends[0], rows / 10, Math.max(1, ids / 10), 0, budget);
        }
        List<Result> results = new ArrayList<>();
        for (String backend : backends) {
            for (int round = 1; round <= rounds; round++) {
                for (String q : SqlRounds.order(queries, round)) {
                    results.add(SqlRun.run(q, backend, rows, ids, round, budget));
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%n## SqlBenchmark: %,d rows of %,d distinct STRING ids, parallelism 1,"
                        + " mini-batch on, fpp 1%%, %d round(s)%n%n",
                rows,
                ids,
                rounds);
        if (queries.stream().anyMatch(SqlQueries::isEventTime)) {
            System.out.printf(
                    Locale.ROOT,
                    "Queries *%s: rowtime ts = row index ms + a jitter in [0, %d) ms,"
                            + " WATERMARK ts - %d ms.%n%n",
                    EVENT_TIME,
                    disorderMs(),
                    disorderMs());
        }
        if (queries.stream().anyMatch(SqlQueries::isUpdating)) {
            System.out.printf(
                    Locale.ROOT,
                    "Queries *%s: a retract changelog of %,d rows (+I of %,d values, -D of half"
                            + " of them %,d rows behind), %,d distinct ids at the end;"
                            + " bloom_count_distinct_updating at fpp %s.%n%n",
                    UPDATING,
                    UpdatingInput.changelogRows(ids),
                    2 * ids,
                    UpdatingInput.LAG,
                    ids,
                    System.getProperty(UPDATING_FPP_PROPERTY, "0.01"));
        }
        System.out.println(
                "| backend | round | query | records/s | vs exact | CPU us/row | state bytes | vs"
                        + " exact | rows out | peak RSS MiB | load (1 min) |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Result r : results) {
            Result exact =
                    results.stream()
                            .filter(
                                    x ->
                                            x.backend.equals(r.backend)
                                                    && x.round == r.round
                                                    && x.query.equals(SqlRounds.baseline(r.query)))
                            .findFirst()
                            .orElse(r);
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %d | %s | %,.0f | %.2fx | %.2f | %,d | %.3fx | %,d | %,d | %s |%n",
                    r.backend,
                    r.round,
                    r.query,
                    r.recordsPerSecond(),
                    r.recordsPerSecond() / exact.recordsPerSecond(),
                    r.cpuMicrosPerRow(),
                    r.stateBytes,
                    (double) r.stateBytes / exact.stateBytes,
                    r.out,
                    r.peakRssBytes >> 20,
                    r.load);
        }
        List<SqlRounds.Run> runs = new ArrayList<>();
        for (Result r : results) {
            runs.add(
                    new SqlRounds.Run(
                            r.backend,
                            r.query,
                            r.round,
                            r.recordsPerSecond(),
                            r.cpuMicrosPerRow()));
        }
        System.out.printf(Locale.ROOT, "%n### Medians of %d round(s)%n%n", rounds);
        for (String backend : backends) {
            System.out.print(SqlRounds.table(SqlRounds.summarize(runs, backend)));
        }
        if (results.stream().anyMatch(r -> !r.complete())) {
            System.out.printf(
                    Locale.ROOT,
                    "%nRuns stopped at the budget of %s: their records/s cover the rows done.%n",
                    budget);
        }
        if (csv != null) {
            SqlMedians.append(csv, SqlMedians.of(rows, ids, List.of(backends), results));
            System.out.println("appended to " + csv);
        }
    }
}
