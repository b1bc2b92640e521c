package io.bloomstream.jobs.cluster;

import static io.bloomstream.jobs.cluster.ScaleBenchmark.BUDGET_MS;
import static io.bloomstream.jobs.cluster.ScaleBenchmark.DISTINCT;
import static io.bloomstream.jobs.cluster.ScaleBenchmark.RECOVERY_TIMEOUT_MS;
import static io.bloomstream.jobs.cluster.ScaleBenchmark.SEED;
import static io.bloomstream.jobs.cluster.ScaleBenchmark.distinctAfter;
import static io.bloomstream.jobs.cluster.ScaleBenchmark.rss;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * One contender of {@link ScaleBenchmark} on a cluster of its own: started, submitted with {@code
 * flink run}, sampled every 500 ms through the JobManager's REST API, its TaskManager killed
 * midway, stopped at its budget or finished, and the cluster stopped.
 */
final class ScaleRun {
    /** One step of a run. */
    record Step(
            long events,
            long distinct,
            double seconds,
            double rate,
            boolean recovery,
            long stateBytes,
            long uploadedBytes,
            long checkpointMs,
            long tmRssA,
            long tmRssB) {}

    /** One completed checkpoint. */
    record Checkpoint(
            long id, long events, long distinct, long stateBytes, long uploadedBytes, long ms) {}

    /** What the kill cost. */
    record Recovery(
            long killedAtEvents,
            long killedAtDistinct,
            long restoredEvents,
            long restoredStateBytes,
            long runningMs,
            long flowingMs,
            long caughtUpMs) {}

    final String contender;
    final Path dir;
    final Path jobJar;
    final Path scaleJar;
    final List<Step> steps = new ArrayList<>();
    final Map<Long, Checkpoint> checkpoints = new LinkedHashMap<>();
    Recovery recovery;
    boolean finished;
    long events;
    double seconds;
    private StandaloneCluster cluster;
    private ClusterRest rest;
    private String job;
    private final Map<String, String> metricIds = new LinkedHashMap<>();
    private final java.util.TreeMap<Long, Long> samples = new java.util.TreeMap<>();

    ScaleRun(String contender, Path dir, Path jobJar, Path scaleJar) {
        this.contender = contender;
        this.dir = dir;
        this.jobJar = jobJar;
        this.scaleJar = scaleJar;
    }

    boolean passThrough() {
        return contender.equals("pass-through");
    }

    boolean exact() {
        return contender.equals("bloom-exact")
                || contender.startsWith("exact")
                || contender.equals("sql-row-number");
    }

    void execute() throws Exception {
        try (StandaloneCluster c = new StandaloneCluster(dir, config(dir, contender))) {
            cluster = c;
            if (Boolean.getBoolean("bloomstream.scale.jfr")) {
                cluster.recordTaskManagers(dir);
            }
            cluster.start(2);
            rest = new ClusterRest(cluster.restAddress());
            List<String> options = new ArrayList<>();
            options.addAll(
                    List.of(
                            "-p",
                            "2",
                            "-C",
                            scaleJar.toUri().toString(),
                            "-c",
                            ScaleJob.class.getName()));
            job =
                    ChaosITCase.submit(
                                    cluster,
                                    jobJar,
                                    contender,
                                    options,
                                    new String[] {
                                        contender,
                                        Long.toString(DISTINCT),
                                        dir.resolve("output").toUri().toString(),
                                        Long.toString(SEED)
                                    })
                            .get(5, TimeUnit.MINUTES);
            measure();
        }
    }

    private void measure() throws Exception {
        long total = 2 * DISTINCT;
        long step = DISTINCT >= 100_000_000L ? 10_000_000L : 1_000_000L;
        TreeSet<Long> marks = new TreeSet<>();
        for (long p = 1_000_000L; p < step; p *= 10) {
            marks.addAll(List.of(p, 2 * p, 5 * p));
        }
        for (long m = step; m <= total; m += step) {
            marks.add(m);
        }
        marks.add(total);
        io.bloomstream.jobs.Await.until(
                contender + " running",
                java.time.Duration.ofMinutes(5),
                java.time.Duration.ofMillis(100),
                () -> rest.runningSince(job, 0));
        long start = System.currentTimeMillis(); // rates count from the job running
        long lastT = start;
        long lastEvents = 0;
        long markT = start;
        long markEvents = 0;
        boolean recoveryStep = false;
        while (true) {
            long now = System.currentTimeMillis();
            String state = jobState();
            if ("FINISHED".equals(state)) {
                if (!marks.isEmpty() && lastEvents < total) {
                    double stepSeconds = (now - markT) / 1000.0;
                    steps.add(
                            step(
                                    total,
                                    (now - start) / 1000.0,
                                    (total - markEvents) / stepSeconds,
                                    recoveryStep));
                }
                finished = true;
                events = total;
                seconds = (now - start) / 1000.0;
                return;
            }
            if ("FAILED".equals(state) || "CANCELED".equals(state)) {
                throw new AssertionError(contender + ": job " + state + "; logs in " + dir);
            }
            long e = gauge(ScaleJob.EVENTS);
            samples.put(now, e);
            recordCheckpoints();
            if (e > lastEvents) {
                while (!marks.isEmpty() && marks.first() <= e) {
                    long mark = marks.pollFirst();
                    // the time the mark was passed, between the last two samples
                    double t =
                            lastT + (now - lastT) * (double) (mark - lastEvents) / (e - lastEvents);
                    double stepSeconds = (t - markT) / 1000.0;
                    steps.add(
                            step(
                                    mark,
                                    (t - start) / 1000.0,
                                    (mark - markEvents) / stepSeconds,
                                    recoveryStep));
                    markT = (long) t;
                    markEvents = mark;
                    recoveryStep = false;
                }
                lastT = now;
                lastEvents = e;
            }
            events = Math.max(events, e);
            if (recovery == null
                    && !checkpoints.isEmpty()
                    && (e >= DISTINCT || (exact() && now - start >= BUDGET_MS / 2))) {
                recovery = killAndRecover(e);
                recoveryStep = true;
                lastT = System.currentTimeMillis(); // back at e, which is lastEvents
                continue;
            }
            // an exact contender stops at the budget, a Bloom one at three (a safety net)
            if (now - start >= (exact() ? 1 : 3) * BUDGET_MS) {
                rest.stopWithSavepoint(
                        job, dir.resolve("savepoint").toUri(), RECOVERY_TIMEOUT_MS, "NATIVE");
                seconds = (System.currentTimeMillis() - start) / 1000.0;
                return;
            }
            TimeUnit.MILLISECONDS.sleep(500); // sampling interval
        }
    }

    private Step step(long mark, double t, double rate, boolean recoveryStep) {
        JsonNode last =
                rest.checkpoints(job).map(c -> c.path("latest").path("completed")).orElse(null);
        List<Long> rss = new ArrayList<>();
        for (String tm : cluster.liveTaskManagers()) {
            rss.add(rss(cluster.taskManagerPid(tm)));
        }
        return new Step(
                mark,
                distinctAfter(mark),
                t,
                rate,
                recoveryStep,
                last == null ? 0 : last.path("state_size").asLong(),
                last == null ? 0 : last.path("checkpointed_size").asLong(),
                last == null ? 0 : last.path("end_to_end_duration").asLong(),
                rss.size() > 0 ? rss.get(0) : 0,
                rss.size() > 1 ? rss.get(1) : 0);
    }

    /** The events read at time {@code t}, between the two samples around it. */
    private long eventsAt(long t) {
        Map.Entry<Long, Long> before = samples.floorEntry(t);
        Map.Entry<Long, Long> after = samples.ceilingEntry(t);
        if (before == null || after == null || after.getKey().equals(before.getKey())) {
            return before != null ? before.getValue() : after != null ? after.getValue() : 0;
        }
        double f = (double) (t - before.getKey()) / (after.getKey() - before.getKey());
        return Math.round(before.getValue() + f * (after.getValue() - before.getValue()));
    }

    /** Records the checkpoints completed since the last call, at the events of their trigger. */
    private void recordCheckpoints() {
        rest.checkpoints(job)
                .ifPresent(
                        c -> {
                            for (JsonNode h : c.path("history")) {
                                long id = h.path("id").asLong();
                                if ("COMPLETED".equals(h.path("status").asText())
                                        && !checkpoints.containsKey(id)) {
                                    long e = eventsAt(h.path("trigger_timestamp").asLong());
                                    checkpoints.put(
                                            id,
                                            new Checkpoint(
                                                    id,
                                                    e,
                                                    distinctAfter(e),
                                                    h.path("state_size").asLong(),
                                                    h.path("checkpointed_size").asLong(),
                                                    h.path("end_to_end_duration").asLong()));
                                }
                            }
                        });
    }

    /**
     * Kills tm-1, starts a replacement and measures from the kill: until every subtask is RUNNING
     * again, until every subtask's new attempt reports and the events read rise past the restored
     * count, and until they are back at {@code e}.
     */
    private Recovery killAndRecover(long e) throws Exception {
        long attemptBefore = gauge(ScaleJob.EVENTS + ScaleJob.ATTEMPT, "max");
        java.util.Set<Path> before = new java.util.HashSet<>(outputFiles());
        long killedAt = System.currentTimeMillis();
        cluster.killTaskManager("tm-1");
        cluster.startTaskManager();
        long running = -1;
        long flowing = -1;
        long restoredEvents = -1;
        long deadline = killedAt + RECOVERY_TIMEOUT_MS;
        while (true) {
            long now = System.currentTimeMillis();
            if (now > deadline) {
                throw new AssertionError(
                        contender + ": not recovered in " + RECOVERY_TIMEOUT_MS + " ms");
            }
            if (running < 0 && rest.runningSince(job, killedAt)) {
                running = now - killedAt;
            }
            String state = jobState();
            if ("FAILED".equals(state) || "CANCELED".equals(state)) {
                throw new AssertionError(contender + ": job " + state + "; logs in " + dir);
            }
            if (flowing < 0 && newOutput(before)) {
                flowing = now - killedAt;
            }
            if (flowing >= 0 && gauge(ScaleJob.EVENTS + ScaleJob.ATTEMPT, "min") > attemptBefore) {
                // every subtask's metrics now come from its new attempt
                if (restoredEvents < 0) {
                    restoredEvents = gauge(ScaleJob.EVENTS + ScaleJob.RESTORED, "sum");
                }
                long events = gauge(ScaleJob.EVENTS, "sum");
                if (events >= e) {
                    long restored =
                            rest.checkpoints(job)
                                    .map(c -> c.path("latest").path("restored").path("id"))
                                    .map(JsonNode::asLong)
                                    .map(
                                            id ->
                                                    checkpoints.containsKey(id)
                                                            ? checkpoints.get(id).stateBytes()
                                                            : -1L)
                                    .orElse(-1L);
                    return new Recovery(
                            e,
                            distinctAfter(e),
                            restoredEvents,
                            restored,
                            running,
                            flowing,
                            now - killedAt);
                }
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling a condition, with a deadline
        }
    }

    /**
     * Whether records reached the sink again: an in-progress part file (hidden, its name starts
     * with a dot) that was not there at the kill, one the restored job opened, has data. (A pending
     * file committed after the kill is a new visible name, not a new hidden one.)
     */
    private boolean newOutput(java.util.Set<Path> before) throws IOException {
        for (Path f : outputFiles()) {
            try {
                if (!before.contains(f)
                        && f.getFileName().toString().startsWith(".")
                        && f.getFileName().toString().contains("inprogress")
                        && Files.size(f) > 0) {
                    return true;
                }
            } catch (java.nio.file.NoSuchFileException e) {
                // committed (renamed) since listed
            }
        }
        return false;
    }

    /** The sink's files now, committed and in progress. */
    private List<Path> outputFiles() throws IOException {
        Path out = dir.resolve("output");
        if (!Files.isDirectory(out)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(out)) {
            return s.filter(Files::isRegularFile).toList();
        } catch (java.io.UncheckedIOException e) {
            return List.of(); // a file committed (renamed) while listed: the next poll sees it
        }
    }

    private String jobState() {
        return rest.get("/jobs/" + job).map(j -> j.path("state").asText()).orElse("UNKNOWN");
    }

    /** The sum over subtasks of gauge {@code name} (0 while not reported). */
    private long gauge(String name) {
        return gauge(name, "sum");
    }

    /** Aggregate {@code agg} (sum, min) over subtasks of gauge {@code name}, 0 if none. */
    private long gauge(String name, String agg) {
        String where = metricIds.get(name);
        if (where == null) {
            Optional<JsonNode> j = rest.get("/jobs/" + job);
            if (j.isEmpty()) {
                return 0;
            }
            for (JsonNode v : j.get().path("vertices")) {
                String vertex = v.path("id").asText();
                for (JsonNode m :
                        rest.get("/jobs/" + job + "/vertices/" + vertex + "/subtasks/metrics")
                                .orElseGet(
                                        () ->
                                                org.apache.flink.shaded.jackson2.com.fasterxml
                                                        .jackson.databind.node.JsonNodeFactory
                                                        .instance
                                                        .arrayNode())) {
                    if (m.path("id").asText().endsWith("." + name)) {
                        where = vertex + "|" + m.path("id").asText();
                        metricIds.put(name, where);
                    }
                }
            }
            if (where == null) {
                return 0;
            }
        }
        String[] vm = where.split("\\|", 2);
        return rest.get(
                        "/jobs/"
                                + job
                                + "/vertices/"
                                + vm[0]
                                + "/subtasks/metrics?get="
                                + vm[1]
                                + "&agg="
                                + agg)
                .map(a -> a.path(0).path(agg).asDouble())
                .map(Double::longValue)
                .orElse(0L);
    }

    /** Cluster settings: production memory, RocksDB with incremental checkpoints every 10 s. */
    static Map<String, String> config(Path dir, String contender) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("taskmanager.numberOfTaskSlots", "1");
        c.put("taskmanager.memory.process.size", "4096m"); // managed: Flink's default 0.4
        c.put("state.backend.type", "rocksdb");
        c.put("execution.checkpointing.incremental", "true");
        c.put("execution.checkpointing.interval", "10 s");
        c.put("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
        c.put("restart-strategy.type", "fixed-delay");
        c.put("restart-strategy.fixed-delay.attempts", "100");
        c.put("restart-strategy.fixed-delay.delay", "1 s");
        // A killed TaskManager: its peers see the lost connections at once; the JobManager's
        // heartbeats every 1 s time out after 5 s (Flink's defaults: 10 s and 50 s)
        c.put("heartbeat.interval", "1 s");
        c.put("heartbeat.timeout", "5 s");
        c.put("metrics.fetcher.update-interval", "500 ms");
        c.put("web.checkpoints.history", "50");
        c.put("rest.cache.checkpoint-statistics.timeout", "1 ms");
        c.put("web.refresh-interval", "100 ms"); // job status within 0.1 s (default 3 s)
        if (contender.equals("exact-rocksdb-bloom")) {
            c.put("state.backend.rocksdb.use-bloom-filter", "true");
        }
        return c;
    }
}
