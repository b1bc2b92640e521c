package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.Await;
import io.bloomstream.jobs.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Process crashes: three Kafka-to-Kafka jobs (dedup on the heap backend, dedup on RocksDB with
 * incremental checkpoints, screen) run side by side on a standalone cluster of separate JVMs,
 * checkpointing every second, while the test kills processes with SIGKILL at seeded moments: a
 * TaskManager (three times; once while a checkpoint is in progress as the JobManager's REST API
 * shows it, choosing a TaskManager with a subtask that has not acknowledged it), and the JobManager
 * once. A replacement TaskManager, or JobManager, is started after each kill; the jobs recover by
 * themselves through the cluster's restart strategy (fixed delay, 1 s). Afterwards, a {@code
 * read_committed} consumer checks the committed output ({@link ChaosData}). Recovery times per kill
 * are printed: kill to every task RUNNING again (a task is RUNNING once its state is restored), and
 * kill to the first checkpoint completed after it. The cluster notices a dead TaskManager through
 * its peers' lost connections or missed heartbeats (1 s apart, 5 s timeout here; Flink's defaults
 * are 10 s and 50 s), which bounds the recovery time from below.
 *
 * <p>The TaskManager logs may show {@code KafkaCommitter - Unable to commit transaction ... because
 * its producer is already fenced ... most likely signals data loss} after a kill that came just
 * after a checkpoint completed: the restored job commits that checkpoint's transactions again, and
 * a broker with {@code transaction.version=2} (the default of new Kafka 4 clusters) bumps the
 * producer epoch at every commit, so the repeated commit of an already committed transaction is
 * answered as fenced. The output checks are what tell whether anything was lost.
 *
 * <p>The JobManager kill: a standalone cluster without high availability cannot recover a job whose
 * JobManager died (the job graph and the completed checkpoints live in its memory). Flink's
 * ZooKeeper HA services and a ZooKeeper server are both on the class path already (flink-runtime
 * ships ZooKeeper shaded), so the cluster runs with ZooKeeper HA ({@link ZooKeeperServer}): the
 * killed JobManager's successor takes over the leadership once its ZooKeeper session expires (3 s),
 * recovers the jobs from the HA store and restores them from their latest checkpoint.
 *
 * <p>Kill moments and victims come from a seeded {@link Random} ({@code -Dbloomstream.chaosSeed});
 * the checks do not depend on them. {@code -Dbloomstream.soak=true} runs minutes of input with many
 * kills.
 */
class ChaosITCase {

    static final boolean SOAK = Boolean.getBoolean("bloomstream.soak");
    static final long SEED = Long.getLong("bloomstream.chaosSeed", 12L);
    static final long RECOVERY_TIMEOUT_MS = 180_000;
    static final Pattern JOB_ID = Pattern.compile("JobID ([0-9a-f]{32})");

    enum Kill {
        TASK_MANAGER,
        TASK_MANAGER_MID_CHECKPOINT,
        JOB_MANAGER
    }

    /** What one kill cost a job: kill to all tasks running, kill to the next checkpoint. */
    record Recovery(int kill, Kill kind, String victim, String job, long runningMs, long ckptMs) {}

    @Test
    void jobsRecoverFromKilledProcessesWithExactlyOnceOutput(
            @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path tmp) throws Exception {
        Path jar =
                Path.of(
                                System.getProperty(
                                        "bloomstream.jobJar", "target/bloomstream-flink-job.jar"))
                        .toAbsolutePath();
        assertThat(jar).as("the slim job jar (built by package)").exists();
        List<Kill> plan = plan();
        ChaosData data =
                SOAK ? new ChaosData(150_000, 150_000, SEED) : new ChaosData(12_000, 12_000, SEED);
        long produceMillis = SOAK ? 300_000 : 50_000;
        BloomFilter filter = BloomFilter.create(ChaosData.listed().size(), 0.01);
        ChaosData.listed().forEach(s -> filter.add(s));
        Path filterFile = tmp.resolve("spam.bloom");
        Files.write(filterFile, FilterCodec.encode(filter, Normalization.EMAIL));
        long started = System.nanoTime();

        try (ZooKeeperServer zk = new ZooKeeperServer(tmp);
                KafkaBroker kafka = new KafkaBroker(Files.createDirectories(tmp.resolve("kafka")));
                StandaloneCluster cluster = new StandaloneCluster(tmp, config(zk, tmp))) {
            CompletableFuture<Void> broker =
                    CompletableFuture.runAsync(
                            () -> {
                                try {
                                    kafka.start();
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            });
            cluster.start(3);
            broker.get(2, TimeUnit.MINUTES);
            kafka.createTopics(
                    2,
                    "events",
                    "unique-heap",
                    "dlq-heap",
                    "unique-rocks",
                    "dlq-rocks",
                    "mails",
                    "clean",
                    "flagged",
                    "dlq-screen");
            ClusterRest rest = new ClusterRest(cluster.restAddress());
            String servers = kafka.bootstrapServers();
            var heap = submit(cluster, jar, "heap", List.of(), dedup(servers, "heap", data));
            var rocks =
                    submit(
                            cluster,
                            jar,
                            "rocks",
                            List.of(
                                    "-Dstate.backend.type=rocksdb",
                                    "-Dexecution.checkpointing.incremental=true"),
                            dedup(servers, "rocks", data));
            var screen = submit(cluster, jar, "screen", List.of(), screen(servers, filterFile));
            Map<String, String> jobs = new LinkedHashMap<>();
            jobs.put("dedup-heap", heap.get());
            jobs.put("dedup-rocks", rocks.get());
            jobs.put("screen", screen.get());
            String rocksId = jobs.get("dedup-rocks");
            assertThat(rest.get("/jobs/" + rocksId + "/checkpoints/config").orElseThrow())
                    .asString()
                    .contains("EmbeddedRocksDBStateBackend");
            for (String id : jobs.values()) {
                await(
                        "job " + id + " running with a checkpoint",
                        () ->
                                rest.runningSince(id, 0)
                                        && rest.completedCheckpointAckedAfter(id, 0) > 0);
            }
            System.out.printf("cluster and jobs up in %d s%n", secondsSince(started));

            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Void> producer =
                    CompletableFuture.runAsync(() -> produce(kafka, data, produceMillis, stop));
            Chaos chaos = new Chaos(cluster, rest, jobs, new Random(SEED));
            List<Recovery> recoveries = new ArrayList<>();
            try {
                for (int i = 0; i < plan.size(); i++) {
                    recoveries.addAll(chaos.kill(i, plan.get(i)));
                }
                producer.get(produceMillis + 120_000, TimeUnit.MILLISECONDS);
            } finally {
                stop.set(true); // on a failure, before the broker stops
            }
            // Incremental: the last checkpoint uploaded less than the state it refers to (it
            // shares the RocksDB files of earlier ones).
            JsonNode last =
                    rest.checkpoints(rocksId).orElseThrow().path("latest").path("completed");
            System.out.printf(
                    "dedup-rocks: last checkpoint %d uploaded %d of %d bytes of state%n",
                    last.path("id").asLong(),
                    last.path("checkpointed_size").asLong(),
                    last.path("state_size").asLong());
            assertThat(last.path("checkpointed_size").asLong())
                    .isLessThan(last.path("state_size").asLong());
            Map<String, String> groups =
                    Map.of(
                            "dedup-heap",
                            "chaos-heap",
                            "dedup-rocks",
                            "chaos-rocks",
                            "screen",
                            "chaos-screen");
            for (Map.Entry<String, String> job : jobs.entrySet()) {
                String topic = job.getKey().equals("screen") ? "mails" : "events";
                await(
                        job.getKey() + " consumed everything",
                        () -> kafka.consumedAll(groups.get(job.getKey()), topic));
                rest.stopWithSavepoint(
                        job.getValue(), tmp.resolve("savepoints").toUri(), RECOVERY_TIMEOUT_MS);
            }
            System.out.printf(
                    "all kills survived, input consumed, jobs stopped in %d s%n",
                    secondsSince(started));
            printRecoveries(recoveries, chaos);

            data.checkDedup(
                    "dedup-heap",
                    kafka.readCommitted("unique-heap"),
                    kafka.readCommitted("dlq-heap"));
            data.checkDedup(
                    "dedup-rocks",
                    kafka.readCommitted("unique-rocks"),
                    kafka.readCommitted("dlq-rocks"));
            data.checkScreen(
                    kafka.readCommitted("clean"),
                    kafka.readCommitted("flagged"),
                    kafka.readCommitted("dlq-screen"),
                    filter.expectedFpp());
            assertThat(recoveries.stream().map(Recovery::kind))
                    .contains(Kill.TASK_MANAGER_MID_CHECKPOINT, Kill.JOB_MANAGER);
        }
        System.out.printf("ChaosITCase took %d s%n", secondsSince(started));
    }

    /** The kills of one run: TaskManagers (one mid-checkpoint) and the JobManager. */
    static List<Kill> plan() {
        if (!SOAK) {
            return List.of(
                    Kill.TASK_MANAGER,
                    Kill.TASK_MANAGER_MID_CHECKPOINT,
                    Kill.JOB_MANAGER,
                    Kill.TASK_MANAGER);
        }
        List<Kill> plan = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            plan.addAll(
                    List.of(
                            Kill.TASK_MANAGER,
                            Kill.TASK_MANAGER_MID_CHECKPOINT,
                            Kill.TASK_MANAGER,
                            Kill.JOB_MANAGER));
        }
        return plan;
    }

    /** Cluster settings: HA, the restart strategy, quick failure detection, fresh REST figures. */
    static Map<String, String> config(ZooKeeperServer zk, Path tmp) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("high-availability.type", "zookeeper");
        c.put("high-availability.zookeeper.quorum", zk.connectString());
        c.put("high-availability.storageDir", tmp.resolve("ha").toUri().toString());
        c.put("high-availability.cluster-id", "chaos");
        c.put("high-availability.zookeeper.client.session-timeout", "3 s");
        c.put("high-availability.zookeeper.client.connection-timeout", "3 s");
        c.put("restart-strategy.type", "fixed-delay");
        c.put("restart-strategy.fixed-delay.attempts", "1000");
        c.put("restart-strategy.fixed-delay.delay", "1 s");
        // A killed TaskManager is noticed by its peers' network stack at once, by the JobManager
        // after missed heartbeats: 1 s apart, 5 s timeout (defaults 10 s and 50 s).
        c.put("heartbeat.interval", "1 s");
        c.put("heartbeat.timeout", "5 s");
        c.put("taskmanager.numberOfTaskSlots", "3");
        c.put("taskmanager.load-balance.mode", "SLOTS");
        c.put("execution.checkpointing.interval", "1 s");
        c.put("execution.checkpointing.num-retained", "2");
        c.put("web.refresh-interval", "100 ms");
        c.put("rest.cache.checkpoint-statistics.timeout", "1 ms"); // acks seen at once
        return c;
    }

    static String[] dedup(String servers, String name, ChaosData data) {
        return new String[] {
            "dedup",
            "--bootstrap-servers",
            servers,
            "--input-topic",
            "events",
            "--output-topic",
            "unique-" + name,
            "--dead-letter-topic",
            "dlq-" + name,
            "--group-id",
            "chaos-" + name,
            "--format",
            "json",
            "--id-field",
            "id",
            "--expected-items",
            Integer.toString(data.distinct),
            "--fpp",
            Double.toString(ChaosData.DEDUP_FPP)
        };
    }

    static String[] screen(String servers, Path filterFile) {
        return new String[] {
            "screen",
            "--bootstrap-servers",
            servers,
            "--input-topic",
            "mails",
            "--output-topic",
            "clean",
            "--flagged-topic",
            "flagged",
            "--dead-letter-topic",
            "dlq-screen",
            "--group-id",
            "chaos-screen",
            "--filter",
            filterFile.toUri().toString(),
            "--format",
            "json",
            "--field",
            "from"
        };
    }

    /** {@code flink run -d}, in the background; completes with the job id. */
    static CompletableFuture<String> submit(
            StandaloneCluster cluster, Path jar, String name, List<String> options, String[] args) {
        return CompletableFuture.supplyAsync(
                () -> {
                    List<String> all = new ArrayList<>();
                    all.add("-d");
                    all.addAll(options);
                    all.add(jar.toString());
                    all.addAll(List.of(args));
                    Path log = cluster.dir().resolve("flink-run-" + name + ".log");
                    try {
                        int status = cluster.flinkRun(log, all.toArray(new String[0]));
                        String out = Files.readString(log);
                        Matcher m = JOB_ID.matcher(out);
                        if (status != 0 || !m.find()) {
                            throw new IllegalStateException("flink run " + name + ": " + out);
                        }
                        return m.group(1);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
    }

    /** Sends the input at an even pace over {@code millis}: the jobs keep working for that long. */
    static void produce(KafkaBroker kafka, ChaosData data, long millis, AtomicBoolean stop) {
        long start = System.nanoTime();
        int sentEvents = 0;
        int sentMails = 0;
        try (KafkaProducer<byte[], byte[]> producer = kafka.producer()) {
            while (!stop.get()
                    && (sentEvents < data.events.size() || sentMails < data.mails.size())) {
                double f = Math.min(1.0, (System.nanoTime() - start) / 1e6 / millis);
                int e = (int) Math.ceil(f * data.events.size());
                int m = (int) Math.ceil(f * data.mails.size());
                for (; sentEvents < e; sentEvents++) {
                    producer.send(new ProducerRecord<>("events", data.events.get(sentEvents)));
                }
                for (; sentMails < m; sentMails++) {
                    producer.send(new ProducerRecord<>("mails", data.mails.get(sentMails)));
                }
                producer.flush();
                TimeUnit.MILLISECONDS.sleep(100); // pacing, not a condition
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static void printRecoveries(List<Recovery> recoveries, Chaos chaos) {
        System.out.println(
                "kill  kind                         victim  job           running  checkpoint");
        for (Recovery r : recoveries) {
            System.out.printf(
                    "%4d  %-27s  %-6s  %-12s  %5.1f s  %7.1f s%n",
                    r.kill(),
                    r.kind(),
                    r.victim(),
                    r.job(),
                    r.runningMs() / 1000.0,
                    r.ckptMs() / 1000.0);
        }
        chaos.notes().forEach(System.out::println);
    }

    static void await(String what, BooleanSupplier done) throws InterruptedException {
        Await.until(what, Duration.ofMillis(RECOVERY_TIMEOUT_MS), Duration.ofMillis(100), done);
    }

    static long secondsSince(long nanos) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - nanos);
    }
}
