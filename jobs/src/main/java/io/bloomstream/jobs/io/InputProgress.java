package io.bloomstream.jobs.io;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the sources of a local run have read so far: records and (for files) bytes, reported by the
 * source readers ({@code Utf8LineFormat} per buffer of 64 KiB, {@code Utf8Lines} per Kafka record)
 * and read by {@link Progress}. Keyed by a run id that the command puts into its source, so runs in
 * one JVM (tests) do not mix. It lives in the JVM of the embedded mini-cluster; a source on a
 * cluster gets no run id and reports nothing.
 */
public final class InputProgress {

    private static final ConcurrentHashMap<String, InputProgress> RUNS = new ConcurrentHashMap<>();

    private final LongAdder records = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final java.util.Set<Integer> readersAtEnd = ConcurrentHashMap.newKeySet();
    private volatile int readers = -1;

    private InputProgress() {}

    /** The counters of run {@code runId} (created on first use); null for a null id. */
    public static InputProgress of(String runId) {
        return runId == null ? null : RUNS.computeIfAbsent(runId, id -> new InputProgress());
    }

    /** Forgets run {@code runId}. */
    public static void remove(String runId) {
        RUNS.remove(runId);
    }

    /** Adds records and bytes read. */
    public void add(long records, long bytes) {
        this.records.add(records);
        this.bytes.add(bytes);
    }

    /** Records read so far. */
    public long records() {
        return records.sum();
    }

    /** Bytes read so far (files only). */
    public long bytes() {
        return bytes.sum();
    }

    /**
     * Reports that reader {@code subtask} of {@code parallelism} read its whole input and emitted
     * every record ({@link HoldAtEnd}).
     */
    public void readerAtEnd(int subtask, int parallelism) {
        readers = parallelism;
        readersAtEnd.add(subtask);
    }

    /** Whether every reader reported the end of its input. */
    public boolean allReadersAtEnd() {
        int n = readers;
        return n > 0 && readersAtEnd.size() >= n;
    }
}
