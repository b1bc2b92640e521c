package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.KafkaBroker;
import io.bloomstream.testing.FailOnce;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The screening job between Kafka topics with its live-update topic on a real KRaft broker: an add
 * and a remove sent to the control topic take effect, survive a stop with savepoint and restart and
 * an injected failure, and every mail lands exactly once in the clean, flagged or dead-letter topic
 * (read_committed).
 */
class KafkaScreenITCase {

    static final int LISTED = 500;
    static final String ADDED = "Added@New.Example";
    static final String REMOVED = "spammer1@bad.example";
    static final Pattern ID = Pattern.compile("mail-\\d{6}");

    /** Mail n: sender by n mod 10: 0 listed, 1 the added sender, 2 the removed one, else clean. */
    static String sender(int n) {
        switch (n % 10) {
            case 0:
                return "Spammer" + (n % LISTED) + "@Bad.Example";
            case 1:
                return ADDED;
            case 2:
                return REMOVED;
            default:
                return "user" + n + "@good.example";
        }
    }

    static List<byte[]> mails(int from, int to) {
        List<byte[]> out = new ArrayList<>();
        for (int n = from; n < to; n++) {
            String json =
                    String.format(
                            "{\"id\":\"mail-%06d\",\"from\":\"%s\",\"subject\":\"hello\"}",
                            n, sender(n));
            out.add(json.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void liveUpdatesFromTheControlTopicTakeEffectAndSurviveRestarts(@TempDir Path tmp)
            throws Exception {
        BloomFilter filter = BloomFilter.create(LISTED, 0.01);
        for (int i = 0; i < LISTED; i++) {
            filter.add(Normalization.EMAIL.apply("spammer" + i + "@bad.example"));
        }
        Path filterFile = tmp.resolve("spam.bloom");
        Files.write(filterFile, FilterCodec.encode(filter, Normalization.EMAIL));
        try (KafkaBroker kafka = new KafkaBroker(tmp)) {
            kafka.start();
            kafka.createTopics(2, "mails", "clean", "flagged", "dlq");
            kafka.createTopics(1, "control"); // one partition: commands keep their order
            List<byte[]> batch1 = mails(0, 2000);
            batch1.add(new byte[] {(byte) 0xFF, (byte) 0xFE}); // not UTF-8
            batch1.add(
                    "{\"id\":\"mail-999999\",\"subject\":\"no sender\"}"
                            .getBytes(StandardCharsets.UTF_8));
            kafka.produce("mails", batch1);
            String[] args = {
                "screen",
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--input-topic",
                "mails",
                "--output-topic",
                "clean",
                "--flagged-topic",
                "flagged",
                "--dead-letter-topic",
                "dlq",
                "--control-topic",
                "control",
                "--group-id",
                "screen-it",
                "--filter",
                filterFile.toUri().toString(),
                "--format",
                "json",
                "--field",
                "from"
            };

            // Run 1: screen batch 1, then apply the updates and checkpoint them; stop with a
            // savepoint. The control topic's committed offsets show a checkpoint holds them.
            StreamExecutionEnvironment env1 = KafkaJobs.environment(null);
            screen(env1, args, lines -> lines);
            JobClient job1 = env1.executeAsync("screen-1");
            KafkaJobs.await(
                    job1,
                    "batch 1 screened",
                    () -> KafkaDedupITCase.consumedAll(kafka, "screen-it", "mails"));
            kafka.produce(
                    "control",
                    List.of(
                            ("add " + ADDED).getBytes(StandardCharsets.UTF_8),
                            ("remove " + REMOVED).getBytes(StandardCharsets.UTF_8),
                            "frobnicate everything".getBytes(StandardCharsets.UTF_8)));
            KafkaJobs.await(
                    job1,
                    "updates checkpointed",
                    () -> KafkaDedupITCase.consumedAll(kafka, "screen-it-control", "control"));
            Path savepoint = KafkaJobs.savepoint(job1, tmp.resolve("savepoints"));

            // Run 2: restore, screen batch 2 with one injected failure after a checkpoint.
            FailOnce.reset(true);
            StreamExecutionEnvironment env2 = KafkaJobs.environment(savepoint);
            screen(env2, args, KafkaJobs.failOnce(300));
            JobClient job2 = env2.executeAsync("screen-2");
            KafkaJobs.await(job2, "a checkpoint", FailOnce.CHECKPOINTED::get);
            kafka.produce("mails", mails(2000, 4000));
            KafkaJobs.await(
                    job2,
                    "batch 2 screened after a failure",
                    () ->
                            FailOnce.FAILED.get()
                                    && KafkaDedupITCase.consumedAll(kafka, "screen-it", "mails"));
            KafkaJobs.savepoint(job2, tmp.resolve("savepoints-2"));

            Map<Integer, String> outcome = new HashMap<>();
            for (String topic : List.of("clean", "flagged", "dlq")) {
                for (String record : kafka.readCommitted(topic)) {
                    Matcher m = ID.matcher(record);
                    if (m.find()) {
                        int n = Integer.parseInt(m.group().substring(5));
                        assertThat(outcome.put(n, topic)).as("mail %d once", n).isNull();
                    }
                }
            }
            assertThat(outcome).hasSize(4001); // 4000 mails and the one without a sender
            assertThat(outcome.get(999999)).isEqualTo("dlq");
            int falseFlags = 0;
            int clean = 0;
            for (int n = 0; n < 4000; n++) {
                String o = outcome.get(n);
                boolean before = n < 2000;
                switch (n % 10) {
                    case 0:
                        assertThat(o).as("listed sender of mail %d", n).isEqualTo("flagged");
                        break;
                    case 1:
                        assertThat(o)
                                .as("added sender, mail %d", n)
                                .isEqualTo(before ? "clean" : "flagged");
                        break;
                    case 2:
                        assertThat(o)
                                .as("removed sender, mail %d", n)
                                .isEqualTo(before ? "flagged" : "clean");
                        break;
                    default:
                        clean++;
                        falseFlags += o.equals("flagged") ? 1 : 0;
                }
            }
            // Unlisted senders flagged: Binomial(clean, p) at 4.5 sigma, p the file's rate.
            double p = filter.expectedFpp();
            assertThat((double) falseFlags)
                    .isLessThanOrEqualTo(clean * p + 4.5 * Math.sqrt(clean * p));
            List<String> dlq = kafka.readCommitted("dlq");
            assertThat(dlq.stream().filter(d -> d.contains("not valid UTF-8 at byte "))).hasSize(1);
            assertThat(dlq.stream().filter(d -> d.contains("screened field missing"))).hasSize(1);
            assertThat(dlq.stream().filter(d -> d.contains("not a screen command"))).hasSize(1);
        }
    }

    /**
     * The screen job of {@code args} into {@code env}: the command's Kafka sources, {@code between}
     * after the input's, {@link ScreenCommand#pipeline} with the command's settings, and its Kafka
     * sinks.
     */
    static void screen(
            StreamExecutionEnvironment env,
            String[] args,
            UnaryOperator<DataStream<String>> between) {
        ScreenCommand command = KafkaJobs.command(args);
        command.write(
                ScreenCommand.pipeline(
                        between.apply(command.io.source(env, "input")),
                        command.updateLines(env),
                        command.settings()));
    }
}
