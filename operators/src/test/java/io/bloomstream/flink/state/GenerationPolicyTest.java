package io.bloomstream.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link GenerationPolicy}: generations of length 1 s, phase 0, retention 3 s. */
class GenerationPolicyTest {

    private static final long L = 1000;
    private static final long R = 3000;

    private static FilterMeta meta() {
        return FilterMeta.forDedup(Hasher.defaultHasher(), FilterMeta.DOMAIN_EVENT_TIME, L, 0);
    }

    @Test
    void anEventConsultsTheBucketsWithinOneRetentionEitherSide() {
        GenerationPolicy p = new GenerationPolicy(R, 0);
        // t = 10.5 s: (t - R, t + R) = (7.5 s, 13.5 s), buckets 7 to 13
        assertThat(p.probeFrom(meta(), 10_500)).isEqualTo(7);
        assertThat(p.probeTo(meta(), 10_500)).isEqualTo(13);
        // at a bucket's first millisecond the last bucket is the one before t + R
        assertThat(p.probeTo(meta(), 10_000)).isEqualTo(12);
    }

    @Test
    void aGenerationExpiresAtTheEndOfItsLastBucketPlusRetentionAndLateness() {
        FilterMeta meta = meta();
        // bucket 3 ends at 3999 ms
        assertThat(new GenerationPolicy(R, 0).expiryOf(meta, 3)).isEqualTo(3999 + R);
        assertThat(new GenerationPolicy(R, 500).expiryOf(meta, 3)).isEqualTo(3999 + R + 500);
        // far-future buckets saturate instead of wrapping into the past
        assertThat(new GenerationPolicy(R, 0).expiryOf(meta, Long.MAX_VALUE / 10))
                .isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void openTakesAFreeSlotBeforeAddingOne() {
        GenerationPolicy p = new GenerationPolicy(R, 0);
        FilterMeta meta = meta();
        GenerationPolicy.Opened first = p.open(meta, 5, 5);
        assertThat(first.slot()).isEqualTo(0);
        assertThat(first.widened()).isFalse();
        assertThat(first.newExpiry()).isEqualTo(5999 + R);
        assertThat(p.open(meta, 6, 6).slot()).isEqualTo(1);
        meta.buckets[0] = FilterMeta.EMPTY;
        meta.lastBuckets[0] = FilterMeta.EMPTY;
        assertThat(p.open(meta, 7, 7).slot()).as("the freed slot").isEqualTo(0);
        assertThat(meta.generations()).isEqualTo(2);
    }

    @Test
    void farFutureBucketsNeverTakeTheSlotsOfOnTimeEvents() {
        GenerationPolicy p = new GenerationPolicy(R, 0);
        FilterMeta meta = meta();
        long horizon = 100;
        p.open(meta, horizon, horizon); // on time
        for (int i = 1; i <= GenerationPolicy.MAX_FUTURE_SLOTS; i++) {
            GenerationPolicy.Opened o = p.open(meta, horizon + 1000L * i, horizon);
            assertThat(o.widened()).isFalse();
        }
        // one more far-future bucket widens the nearest future generation, not the on-time one
        GenerationPolicy.Opened widened = p.open(meta, horizon + 1000L * 100, horizon);
        assertThat(widened.widened()).isTrue();
        assertThat(meta.buckets[widened.slot()]).isGreaterThan(horizon);
        assertThat(meta.lastBuckets[widened.slot()]).isEqualTo(horizon + 1000L * 100);
        assertThat(widened.newExpiry()).isEqualTo(p.expiryOf(meta, horizon + 1000L * 100));
        // on-time buckets still get slots of their own
        GenerationPolicy.Opened onTime = p.open(meta, horizon - 1, horizon);
        assertThat(onTime.widened()).isFalse();
        assertThat(meta.generations()).isLessThanOrEqualTo(FilterMetaSerializer.MAX_SLOTS);
    }

    @Test
    void expiredAndLiveGenerationsPartitionTheSlots() {
        GenerationPolicy p = new GenerationPolicy(R, 0);
        FilterMeta meta = meta();
        p.open(meta, 1, 1); // expires at 1999 + R = 4999
        p.open(meta, 4, 4); // expires at 4999 + R = 7999
        assertThat(p.expiredAt(meta, 4998)).isZero();
        assertThat(p.expiredAt(meta, 4999)).isEqualTo(1L);
        assertThat(p.liveExpiries(meta, 4999)).containsExactly(7999);
        assertThat(p.expiredAt(meta, 8000)).isEqualTo(3L);
        assertThat(p.liveExpiries(meta, 8000)).isEmpty();
    }
}
