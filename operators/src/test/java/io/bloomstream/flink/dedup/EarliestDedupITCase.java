package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mini-cluster test of {@link FirstBy#EVENT_TIME}: global dedup at parallelism 2 on two task
 * managers, heap and RocksDB, Kryo disabled. Each of 5,000 ids occurs 4 times at distinct event
 * times, in an order of arrival unrelated to them; the watermark lags 30 s (more than the times'
 * span), so no event is late, and exactly the occurrence of each id with the smallest time passes,
 * with that time as its timestamp.
 */
class EarliestDedupITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int IDS = 5_000;
    private static final int EVENTS = 4 * IDS;
    private static final long BASE = 1_700_000_000_000L;

    /** Event i: "id,occurrence,time", id i mod IDS, times a permutation of BASE + [0, EVENTS). */
    static String event(long i) {
        return (i % IDS) + "," + (i / IDS) + "," + time(i);
    }

    static long time(long i) {
        return BASE + (i * 7919) % EVENTS;
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void theEarliestOccurrenceOfEachIdPasses(Backend backend) throws Exception {
        StreamExecutionEnvironment env = BloomDedupITCase.env(backend);
        DataStream<String> events =
                env.fromSequence(0, EVENTS - 1)
                        .map(EarliestDedupITCase::event)
                        .returns(Types.STRING)
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy.<String>forBoundedOutOfOrderness(
                                                Duration.ofSeconds(30))
                                        .withTimestampAssigner(
                                                (e, ts) -> Long.parseLong(e.split(",")[2])));
        DedupConfig config =
                DedupConfig.builder()
                        .expectedItems(IDS)
                        .shards(64)
                        .exact(true)
                        .firstBy(FirstBy.EVENT_TIME)
                        .build();
        Map<Long, Long> earliest = new HashMap<>();
        for (long i = 0; i < EVENTS; i++) {
            earliest.merge(i % IDS, time(i), Math::min);
        }
        Map<Long, Long> passed = new HashMap<>();
        try (CloseableIterator<String> it =
                BloomDedup.global(
                                events,
                                IdSelector.ofString(e -> e.substring(0, e.indexOf(','))),
                                config)
                        .executeAndCollect()) {
            while (it.hasNext()) {
                String[] f = it.next().split(",");
                assertThat(passed.put(Long.parseLong(f[0]), Long.parseLong(f[2])))
                        .as("id %s passed twice", f[0])
                        .isNull();
            }
        }
        assertThat(passed).isEqualTo(earliest);
    }
}
