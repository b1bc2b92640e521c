package io.bloomstream.jobs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A real Kafka broker in KRaft mode (broker and controller in one), started as a child JVM from the
 * Maven artifacts on this test's class path, on loopback and free ports. It allows the one-hour
 * transaction timeout that Flink's transactional sink asks for. Closing it stops the process.
 */
public final class KafkaBroker implements AutoCloseable {

    private final Path dir;
    private final int port;
    private Process process;

    public KafkaBroker(Path dir) throws IOException {
        this.dir = dir;
        this.port = Cli.freePort();
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    public void start() throws Exception {
        int controller = Cli.freePort();
        Path props = dir.resolve("server.properties");
        Files.writeString(
                props,
                String.join(
                        "\n",
                        "process.roles=broker,controller",
                        "node.id=1",
                        "controller.quorum.voters=1@127.0.0.1:" + controller,
                        "listeners=PLAINTEXT://127.0.0.1:"
                                + port
                                + ",CONTROLLER://127.0.0.1:"
                                + controller,
                        "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                        "controller.listener.names=CONTROLLER",
                        "inter.broker.listener.name=PLAINTEXT",
                        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                        "log.dirs=" + dir.resolve("logs"),
                        "num.partitions=2",
                        "offsets.topic.replication.factor=1",
                        "transaction.state.log.replication.factor=1",
                        "transaction.state.log.min.isr=1",
                        "min.insync.replicas=1",
                        "group.initial.rebalance.delay.ms=0",
                        "transaction.max.timeout.ms=3600000",
                        ""));
        String clusterId = org.apache.kafka.common.Uuid.randomUuid().toString();
        run(
                List.of(
                        "kafka.tools.StorageTool",
                        "format",
                        "-t",
                        clusterId,
                        "-c",
                        props.toString()),
                "format");
        Path logConfig = dir.resolve("broker-log4j2.properties");
        Files.writeString(
                logConfig,
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.out.ref = out",
                        "appender.out.name = out",
                        "appender.out.type = Console",
                        "appender.out.layout.type = PatternLayout",
                        "appender.out.layout.pattern = %d{HH:mm:ss,SSS} %-5p [%t] %c{1} - %m%n",
                        ""));
        List<String> cmd = java();
        cmd.add(1, "-Dlog4j2.configurationFile=" + logConfig.toUri());
        cmd.add("kafka.Kafka");
        cmd.add(props.toString());
        process =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("broker.log").toFile())
                        .start();
        awaitReady(Duration.ofSeconds(60));
    }

    private void run(List<String> args, String name) throws Exception {
        List<String> cmd = java();
        cmd.addAll(args);
        Path log = dir.resolve(name + ".log");
        Process p =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(name + " failed: " + Files.readString(log));
        }
    }

    private static List<String> java() {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        return cmd;
    }

    private void awaitReady(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "broker exited: " + Files.readString(dir.resolve("broker.log")));
            }
            try (Admin admin = admin()) {
                admin.describeCluster().nodes().get(2, TimeUnit.SECONDS);
                return;
            } catch (Exception e) {
                last = e; // not up yet
            }
            TimeUnit.MILLISECONDS.sleep(250); // polling a condition, with a deadline
        }
        throw new IllegalStateException("broker not ready in " + timeout, last);
    }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10000);
        return Admin.create(p);
    }

    public void createTopics(int partitions, String... names) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (String n : names) {
            topics.add(new NewTopic(n, partitions, (short) 1));
        }
        try (Admin admin = admin()) {
            admin.createTopics(topics).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** A producer of raw keyless values with acks=all; the caller closes it. */
    public KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /**
     * Sends values (raw bytes) to a topic, keyless, and waits for every ack. Value i goes to
     * partition i mod the topic's partition count, so every partition gets its share in every run:
     * left to Kafka's sticky partitioner, a small batch sometimes lands whole in one partition.
     */
    public void produce(String topic, Collection<byte[]> values) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            int partitions = producer.partitionsFor(topic).size();
            int i = 0;
            for (byte[] v : values) {
                producer.send(new ProducerRecord<>(topic, i++ % partitions, null, v));
            }
            producer.flush();
        }
    }

    /** Everything committed in a topic now, read with isolation.level = read_committed. */
    public List<String> readCommitted(String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            var partitions =
                    consumer.partitionsFor(topic).stream()
                            .map(
                                    i ->
                                            new org.apache.kafka.common.TopicPartition(
                                                    topic, i.partition()))
                            .collect(java.util.stream.Collectors.toList());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            var end =
                    consumer.endOffsets(partitions); // the last stable offsets under read_committed
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    out.add(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    /**
     * Whether the group's committed offsets (committed at checkpoints) reached the end of every
     * partition of the topic. A partition without a committed offset counts as consumed only when
     * it holds no records: Flink's Kafka source commits no offset for a partition it has read
     * nothing from.
     */
    public boolean consumedAll(String group, String topic) {
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group)
                            .partitionsToOffsetAndMetadata()
                            .get(5, TimeUnit.SECONDS);
            Set<TopicPartition> partitions =
                    admin
                            .describeTopics(List.of(topic))
                            .allTopicNames()
                            .get(5, TimeUnit.SECONDS)
                            .get(topic)
                            .partitions()
                            .stream()
                            .map(p -> new TopicPartition(topic, p.partition()))
                            .collect(Collectors.toSet());
            var end = offsets(admin, partitions, OffsetSpec.latest());
            var start = offsets(admin, partitions, OffsetSpec.earliest());
            for (TopicPartition p : partitions) {
                OffsetAndMetadata c = committed.get(p);
                long reached = c == null ? start.get(p).offset() : c.offset();
                if (reached < end.get(p).offset()) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            return false; // not yet known: the caller polls
        }
    }

    private static Map<TopicPartition, ListOffsetsResultInfo> offsets(
            Admin admin, Set<TopicPartition> partitions, OffsetSpec spec) throws Exception {
        return admin.listOffsets(partitions.stream().collect(Collectors.toMap(p -> p, p -> spec)))
                .all()
                .get(5, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            ProcessHandle.of(process.pid()).ifPresent(ProcessHandle::destroy);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
