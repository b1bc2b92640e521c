package io.bloomstream.flink.count;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Estimate;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for {@link BloomCount.ShardSum}, the "-sum" operator of a global count: shard records in,
 * one summed record per interval and one final record out.
 */
class ShardSumTest {

    static final long END = Long.MAX_VALUE;

    static final CountConfig EVENT_TIME =
            CountConfig.builder()
                    .timeDomain(TimeDomain.EVENT_TIME)
                    .interval(Duration.ofMillis(1000))
                    .build();

    static final CountConfig PROCESSING_TIME =
            CountConfig.builder().interval(Duration.ofMillis(1000)).build();

    static KeyedOneInputStreamOperatorTestHarness<String, CountEstimate, CountEstimate> harness(
            CountConfig config, Backend backend) throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(new BloomCount.ShardSum(config)),
                        e -> "*",
                        Types.STRING);
        h.setStateBackend(backend.create());
        return h;
    }

    /** A shard's record: one item in a 15-bit, k = 9 stage (7 bits set). */
    static CountEstimate shard(int shard, long timestamp, boolean isFinal) {
        return CountEstimate.of(
                String.valueOf(shard), Estimate.of(7, 15, 9, 15), 1, timestamp, isFinal);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shardsThatOnlyReportFinalsGiveOneFinalSum(Backend backend) throws Exception {
        try (var h = harness(EVENT_TIME, backend)) {
            h.open();
            for (int s = 0; s < 4; s++) {
                h.processElement(new StreamRecord<>(shard(s, END, true), END));
            }
            h.processWatermark(new Watermark(END));
            List<CountEstimate> out = h.extractOutputValues();
            assertThat(out).as("%s", out).hasSize(1);
            CountEstimate sum = out.get(0);
            assertThat(sum.key).isEqualTo("*");
            assertThat(sum.isFinal).isTrue();
            assertThat(sum.valid).isTrue();
            assertThat(sum.bits).isEqualTo(60);
            assertThat(4.0).isBetween(sum.lower, sum.upper);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void eventTimeEmitsOneSumPerIntervalWhenTheWatermarkPassesIt(Backend backend) throws Exception {
        try (var h = harness(EVENT_TIME, backend)) {
            h.open();
            h.processElement(new StreamRecord<>(shard(0, 1000, false), 1000));
            h.processElement(new StreamRecord<>(shard(1, 1000, false), 1000));
            assertThat(h.extractOutputValues()).as("before the watermark").isEmpty();
            h.processWatermark(new Watermark(1000));
            h.processElement(new StreamRecord<>(shard(0, 2000, false), 2000));
            h.processElement(new StreamRecord<>(shard(1, 2000, false), 2000));
            h.processElement(new StreamRecord<>(shard(2, 2000, false), 2000));
            h.processWatermark(new Watermark(2000));
            for (int s = 0; s < 3; s++) {
                h.processElement(new StreamRecord<>(shard(s, END, true), END));
            }
            h.processWatermark(new Watermark(END));
            List<CountEstimate> out = h.extractOutputValues();
            assertThat(out)
                    .extracting(e -> e.timestamp, e -> e.isFinal, e -> e.bits)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple(1000L, false, 30L),
                            org.assertj.core.groups.Tuple.tuple(2000L, false, 45L),
                            org.assertj.core.groups.Tuple.tuple(END, true, 45L));
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void processingTimeGathersAnIntervalsShardsIntoOneRecordAndTheFinalComesLast(Backend backend)
            throws Exception {
        try (var h = harness(PROCESSING_TIME, backend)) {
            h.open();
            h.setProcessingTime(1001);
            h.processElement(new StreamRecord<>(shard(0, 1000, false)));
            h.setProcessingTime(1002);
            h.processElement(new StreamRecord<>(shard(1, 1000, false)));
            h.setProcessingTime(1499); // the grace is interval / 2 = 500 ms
            assertThat(h.extractOutputValues()).isEmpty();
            h.setProcessingTime(1500);
            assertThat(h.extractOutputValues()).extracting(e -> e.bits).containsExactly(30L);
            h.processElement(new StreamRecord<>(shard(2, 1000, false))); // late for 1000
            h.setProcessingTime(1999);
            assertThat(h.extractOutputValues()).as("no second record of 1000").hasSize(1);
            h.setProcessingTime(2001);
            h.processElement(new StreamRecord<>(shard(0, 2000, false)));
            for (int s = 0; s < 3; s++) {
                h.processElement(new StreamRecord<>(shard(s, 2100, true)));
            }
            h.processWatermark(new Watermark(END)); // end of input, before 2000's record
            h.setProcessingTime(3000);
            List<CountEstimate> out = h.extractOutputValues();
            assertThat(out)
                    .extracting(e -> e.timestamp, e -> e.isFinal, e -> e.bits)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple(1000L, false, 30L),
                            org.assertj.core.groups.Tuple.tuple(2100L, true, 45L));
            assertThat(h.numProcessingTimeTimers()).isZero();
            assertThat(h.numEventTimeTimers()).isZero();
        }
    }
}
