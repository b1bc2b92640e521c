package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.KafkaBroker;
import io.bloomstream.testing.FailOnce;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dedup job between Kafka topics on a real KRaft broker: exactly-once through a stop with
 * savepoint and restart, and an injected failure after a checkpoint; bad records go to the
 * dead-letter topic. Output is read with {@code isolation.level=read_committed}.
 */
class KafkaDedupITCase {

    static final int DISTINCT = 3_000;
    static final double FPP = 0.001;

    /**
     * Event i of 3 DISTINCT: the first half uses the ids [0, DISTINCT/2), each three times; the
     * second half alternates new ids [DISTINCT/2, DISTINCT) with repeats of the first half's, which
     * must be dropped across the savepoint.
     */
    static byte[] event(int i) {
        int half = DISTINCT / 2;
        int id = (i < 3 * half || i % 2 == 1) ? (i * 7) % half : half + (i / 2 * 7) % half;
        return ("{\"id\":\"e" + id + "\",\"user\":\"u" + (id % 13) + "\",\"n\":" + i + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static List<byte[]> bad() {
        List<byte[]> bad = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            bad.add(new byte[] {'{', (byte) 0xC3, (byte) 0x28, (byte) i, '}'}); // not UTF-8
            bad.add(("not json " + i).getBytes(StandardCharsets.UTF_8));
            bad.add(("{\"user\":\"u" + i + "\"}").getBytes(StandardCharsets.UTF_8)); // no id
        }
        // longer than the job's --max-line-bytes 2k
        bad.add(
                ("{\"id\":\"long\",\"x\":\"" + "z".repeat(3000) + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
        // the id twice
        bad.add("{\"id\":\"e1\",\"id\":\"twice\"}".getBytes(StandardCharsets.UTF_8));
        return bad;
    }

    @Test
    void everyDistinctIdOnceThroughASavepointAndAFailure(@TempDir Path tmp) throws Exception {
        try (KafkaBroker kafka = new KafkaBroker(tmp)) {
            kafka.start();
            kafka.createTopics(2, "events", "unique", "dlq");
            List<byte[]> first = new ArrayList<>();
            List<byte[]> second = new ArrayList<>();
            for (int i = 0; i < 3 * DISTINCT; i++) {
                (i < 3 * DISTINCT / 2 ? first : second).add(event(i));
            }
            first.addAll(bad());
            kafka.produce("events", first);

            String[] args = {
                "dedup",
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--input-topic",
                "events",
                "--output-topic",
                "unique",
                "--dead-letter-topic",
                "dlq",
                "--group-id",
                "dedup-it",
                "--format",
                "json",
                "--id-field",
                "id",
                "--expected-items",
                Integer.toString(DISTINCT),
                "--fpp",
                Double.toString(FPP),
                "--max-line-bytes",
                "2k"
            };
            // Run 1: consume the first half, then stop with a savepoint.
            StreamExecutionEnvironment env1 = KafkaJobs.environment(null);
            dedup(env1, args, lines -> lines);
            JobClient job1 = env1.executeAsync("dedup-1");
            KafkaJobs.await(
                    job1, "first half consumed", () -> consumedAll(kafka, "dedup-it", "events"));
            Path savepoint = KafkaJobs.savepoint(job1, tmp.resolve("savepoints"));
            int afterRun1 = kafka.readCommitted("unique").size();
            assertThat(afterRun1).isPositive();

            // Run 2: restore; once a checkpoint completed, send the rest, fail once after 500
            // records, recover from the checkpoint, and stop again when all is consumed.
            FailOnce.reset(true);
            StreamExecutionEnvironment env2 = KafkaJobs.environment(savepoint);
            dedup(env2, args, KafkaJobs.failOnce(500));
            JobClient job2 = env2.executeAsync("dedup-2");
            KafkaJobs.await(job2, "a checkpoint", FailOnce.CHECKPOINTED::get);
            kafka.produce("events", second);
            KafkaJobs.await(
                    job2,
                    "failure and recovery",
                    () -> FailOnce.FAILED.get() && consumedAll(kafka, "dedup-it", "events"));
            KafkaJobs.savepoint(job2, tmp.resolve("savepoints-2"));
            assertThat(FailOnce.FAILED.get()).as("failure injected").isTrue();

            List<String> out = kafka.readCommitted("unique");
            Set<String> ids = new HashSet<>();
            for (String record : out) {
                String id =
                        record.substring(
                                record.indexOf("\"id\":\"") + 6, record.indexOf("\",\"user"));
                assertThat(ids.add(id)).as("id %s written once", id).isTrue();
            }
            // Every distinct id once, minus false positives: Binomial(DISTINCT, FPP) at 4.5 sigma.
            double bound = DISTINCT * FPP + 4.5 * Math.sqrt(DISTINCT * FPP);
            assertThat((double) (DISTINCT - ids.size())).isBetween(0.0, bound);
            assertThat(out.size()).isGreaterThan(afterRun1);

            List<String> dlq = kafka.readCommitted("dlq");
            assertThat(dlq).hasSize(17);
            assertThat(
                            dlq.stream()
                                    .filter(
                                            d ->
                                                    d.contains(
                                                                    "line of 3020 bytes, longer"
                                                                            + " than --max-line-bytes"
                                                                            + " 2000")
                                                            && d.contains("record_prefix_base64")))
                    .hasSize(1);
            assertThat(dlq.stream().filter(d -> d.contains("duplicate field 'id'"))).hasSize(1);
            assertThat(
                            dlq.stream()
                                    .filter(
                                            d ->
                                                    d.contains("not valid UTF-8 at byte ")
                                                            && d.contains("record_base64")))
                    .hasSize(5);
            assertThat(dlq.stream().filter(d -> d.contains("not JSON"))).hasSize(5);
            assertThat(dlq.stream().filter(d -> d.contains("missing field 'id'"))).hasSize(5);
        }
    }

    /**
     * The dedup job of {@code args} into {@code env}: the command's Kafka source, {@code between},
     * {@link DedupCommand#pipeline} with the command's settings, and its Kafka sinks.
     */
    static void dedup(
            StreamExecutionEnvironment env,
            String[] args,
            UnaryOperator<DataStream<String>> between) {
        DedupCommand command = KafkaJobs.command(args);
        DedupCommand.Settings settings = command.settings();
        Outputs out =
                DedupCommand.pipeline(
                        between.apply(command.io.source(env, "input", settings.watermarks())),
                        settings);
        command.io.writeOutput(out.records());
        command.io.writeRejected(out.rejected());
    }

    /** Whether the group's committed offsets (committed at checkpoints) reached the end. */
    static boolean consumedAll(KafkaBroker kafka, String group, String topic) {
        return kafka.consumedAll(group, topic);
    }
}
