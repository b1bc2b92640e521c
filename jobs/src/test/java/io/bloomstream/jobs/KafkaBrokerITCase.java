package io.bloomstream.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link KafkaBroker}, the fixture the Kafka ITs wait on: {@link KafkaBroker#consumedAll}
 * counts a partition that never got a record as consumed (Flink's Kafka source commits no offset
 * for it), and {@link KafkaBroker#produce} gives every partition its share.
 */
class KafkaBrokerITCase {

    @TempDir static Path tmp;

    static KafkaBroker kafka;

    @BeforeAll
    static void start() throws Exception {
        kafka = new KafkaBroker(tmp);
        kafka.start();
    }

    @AfterAll
    static void stop() throws Exception {
        kafka.close();
    }

    @Test
    void consumedAllCountsAnEmptyPartitionWithoutCommittedOffsetAsConsumed() throws Exception {
        kafka.createTopics(2, "t");
        TopicPartition p0 = new TopicPartition("t", 0);
        TopicPartition p1 = new TopicPartition("t", 1);
        try (KafkaProducer<byte[], byte[]> producer = kafka.producer()) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>("t", 0, null, value(i))).get();
            }
        }
        assertThat(kafka.consumedAll("g", "t")).as("nothing committed").isFalse();
        commit(kafka, "g", Map.of(p0, 2L));
        assertThat(kafka.consumedAll("g", "t")).as("2 of 3 committed").isFalse();
        // As Flink's source commits: the last offset of partition 0, nothing for partition 1.
        commit(kafka, "g", Map.of(p0, 3L));
        assertThat(kafka.consumedAll("g", "t")).as("all of 0, 1 empty").isTrue();

        try (KafkaProducer<byte[], byte[]> producer = kafka.producer()) {
            producer.send(new ProducerRecord<>("t", 1, null, value(3))).get();
        }
        assertThat(kafka.consumedAll("g", "t")).as("a record in 1, not committed").isFalse();
        commit(kafka, "g", Map.of(p0, 3L, p1, 1L));
        assertThat(kafka.consumedAll("g", "t")).as("all of both").isTrue();
    }

    @Test
    void produceSpreadsValuesOverEveryPartition() throws Exception {
        kafka.createTopics(2, "spread");
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            values.add(value(i));
        }
        kafka.produce("spread", values);
        try (Admin admin = kafka.admin()) {
            var end =
                    admin.listOffsets(
                                    Map.of(
                                            new TopicPartition("spread", 0), OffsetSpec.latest(),
                                            new TopicPartition("spread", 1), OffsetSpec.latest()))
                            .all()
                            .get(30, TimeUnit.SECONDS);
            assertThat(end.get(new TopicPartition("spread", 0)).offset()).isEqualTo(6);
            assertThat(end.get(new TopicPartition("spread", 1)).offset()).isEqualTo(5);
        }
    }

    private static byte[] value(int i) {
        return ("v" + i).getBytes(StandardCharsets.UTF_8);
    }

    /** Commits {@code offsets} for {@code group}, as a source does at a checkpoint. */
    private static void commit(KafkaBroker kafka, String group, Map<TopicPartition, Long> offsets) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(offsets.keySet());
            Map<TopicPartition, OffsetAndMetadata> commit = new java.util.HashMap<>();
            offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o)));
            consumer.commitSync(commit);
        }
    }
}
