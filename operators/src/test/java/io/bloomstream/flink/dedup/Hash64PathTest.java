package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.internal.Shards;
import io.bloomstream.testing.Allocations;
import io.bloomstream.testing.Backend;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tests for the 64-bit hash path of the dedup operator ({@link HashStrategy#XXH3_64}, the default
 * of {@link BloomDedup}): one hash per id chooses the shard, the page and the bits.
 */
class Hash64PathTest {

    private static final int SHARDS = 8;
    private static final int SHARD = 3;

    /**
     * The false-positive rate inside one shard, for ids routed there, against the paged layout's
     * model ({@link FilterSpec#expectedFpp}): the shard takes the hash's low bits, the page its top
     * bits, the positions a re-mix of all of it, so routing must not bias the pages. 2 * 10^5 ids
     * in the shard's filter, 2 * 10^6 other ids of the same shard queried (fixed ids, so the test
     * is deterministic). At the model's rate p ~ 1% the count of false positives is binomial with
     * mean ~ 2 * 10^4 and standard deviation ~ 141 (0.7%): the bounds 0.95x and 1.05x of the model
     * are 7 standard deviations away, so a failure means the layout or the routing is off, not bad
     * luck.
     */
    @Test
    void falsePositiveRateInAShardIsWithin5PercentOfTheLayoutsModel() {
        int n = 200_000;
        int queries = 2_000_000;
        DedupConfig config = DedupConfig.builder().expectedItems(n).fpp(0.01).fixed().build();
        FilterSpec shape = config.stageSpec(n, 0);
        Hasher hasher = Hasher.xxh3_64(Hasher.DEFAULT_SEED);
        FilterSpec spec = FilterSpec.of(shape.bits(), shape.hashes(), shape.pageBits(), hasher);
        IdSelector<String> ids = IdSelector.ofString(s -> s);
        long[][] pages = new long[(int) spec.pages()][Pages.words(spec)];
        long[] h = new long[1];
        long[] scratch = new long[spec.hashes()];
        int added = 0;
        int falsePositives = 0;
        int queried = 0;
        for (long i = 0; queried < queries; i++) {
            String id = "user-" + i + "@example.com";
            assertThat(ids.hash64(id, hasher, h)).isTrue();
            if (Shards.shardOf64(h[0], SHARDS) != SHARD) {
                continue;
            }
            long[] page = pages[(int) spec.page(h[0])];
            if (added < n) {
                Pages.add(spec, page, h[0], h[0], scratch);
                added++;
            } else {
                queried++;
                if (Pages.mightContain(spec, page, h[0], h[0], scratch)) {
                    falsePositives++;
                }
            }
        }
        double model = spec.expectedFpp(n);
        double measured = (double) falsePositives / queries;
        assertThat(measured / model)
                .as("measured %s against the model's %s", measured, model)
                .isBetween(0.95, 1.05);
    }

    /** Every shard gets its share: the low 32 bits of the hash, reduced by a multiply-shift. */
    @Test
    void shardsOfTheHashAreUniform() {
        Hasher hasher = Hasher.xxh3_64(Hasher.DEFAULT_SEED);
        int shards = 1024;
        int[] counts = new int[shards];
        int n = 1_024_000;
        for (long i = 0; i < n; i++) {
            counts[Shards.shardOf64(hasher.hash64(i), shards)]++;
        }
        // 1000 per shard, sd ~ 31.6: 6 sd either side over 1024 shards fails at ~2e-6.
        for (int c : counts) {
            assertThat(c).isBetween(810, 1190);
        }
    }

    /** Ids the extractor of {@link #hashesEachIdOnceAndKeysItByItsShard} was asked for. */
    static final java.util.concurrent.atomic.AtomicInteger EXTRACTED =
            new java.util.concurrent.atomic.AtomicInteger();

    /**
     * The operator hashes each event's id once (the extractor runs once per event, in bundles and
     * one at a time) and derives global mode's shard from that hash, as the shard selector routed
     * the event: the shard of every id's state is the selector's.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    @SuppressWarnings("unchecked")
    void hashesEachIdOnceAndKeysItByItsShard(boolean bundles) throws Exception {
        DedupConfig.Builder b = DedupConfig.builder().expectedItems(10_000).shards(64);
        DedupConfig config = bundles ? b.build() : b.noBundles().build();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        IdSelector<String> ids =
                IdSelector.ofString(
                        s -> {
                            EXTRACTED.incrementAndGet();
                            return s;
                        });
        var out = BloomDedup.global(env.fromData("x"), ids, config);
        @SuppressWarnings("unchecked")
        var t = (OneInputTransformation<String, String>) out.getTransformation();
        @SuppressWarnings("unchecked")
        var op =
                (OneInputStreamOperator<String, String>)
                        ((SimpleOperatorFactory<String>) t.getOperatorFactory()).getOperator();
        Shards.Selector<String> router =
                new Shards.Selector<>(IdSelector.ofString(s -> s), 64, config.hasher());
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op,
                        (Shards.Selector<String>) t.getStateKeySelector(),
                        Types.INT,
                        128,
                        1,
                        0)) {
            h.open();
            EXTRACTED.set(0);
            java.util.Set<Integer> shards = new java.util.TreeSet<>();
            for (int i = 0; i < 2000; i++) {
                String id = "id-" + (i % 1000);
                h.processElement(new StreamRecord<>(id));
                shards.add(router.getKey(id));
                if (!bundles) { // a bundle sets the key when it judges the event
                    assertThat(((DedupOperator<?, ?>) op).getCurrentKey())
                            .isEqualTo(router.getKey(id));
                }
            }
            judge(op);
            assertThat(EXTRACTED.get()).as("ids extracted for 2000 events").isEqualTo(2000);
            assertThat(h.getOutput()).hasSize(1000);
            h.snapshot(1, 1); // writes the cached metadata back to the backend
            java.util.Set<Integer> keyed = new java.util.TreeSet<>();
            try (var keys =
                    ((DedupOperator<?, ?>) op)
                            .getKeyedStateBackend()
                            .<org.apache.flink.runtime.state.VoidNamespace>getKeys(
                                    DedupFunction.META_STATE,
                                    org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
                keys.forEach(k -> keyed.add((Integer) k));
            }
            assertThat(keyed).as("the shards that hold state").isEqualTo(shards);
        }
    }

    @Test
    void bloomDedupUsesTheNewStrategyUnlessTheConfigSetsOne() throws Exception {
        assertThat(operator(DedupConfig.builder().expectedItems(1000).build()).shape())
                .contains("strategy=XXH3_64");
        assertThat(
                        operator(
                                        DedupConfig.builder()
                                                .expectedItems(1000)
                                                .hashStrategy(HashStrategy.XXH3_128)
                                                .build())
                                .shape())
                .contains("strategy=XXH3_128");
    }

    /**
     * The per-event path of global mode (default config, string ids; in bundles, the default, and
     * one at a time) allocates nothing once a shard's page is owned by the write-back cache:
     * measured by the JVM's per-thread allocation counter over 50,000 duplicates (which the harness
     * does not collect), after a warm-up. Each event is its own record, made before the measurement
     * (a bundle keeps its records until it is judged, as Flink's inputs hand it a new one each).
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void globalModeAllocatesNothingPerDuplicate(Backend backend) throws Exception {
        DedupConfig.Builder config = DedupConfig.builder().expectedItems(100_000).fpp(0.01);
        assertAllocatesNothingPerDuplicate(config.build(), backend);
        assertAllocatesNothingPerDuplicate(config.noBundles().build(), backend);
    }

    private static void assertAllocatesNothingPerDuplicate(DedupConfig config, Backend backend)
            throws Exception {
        Built op = operator(config);
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op.operator, op.keys, Types.INT, 128, 1, 0)) {
            h.setStateBackend(backend.create());
            h.open();
            List<StreamRecord<String>> records = new ArrayList<>();
            for (int i = 0; i < 50_000; i++) {
                records.add(new StreamRecord<>("id-" + i));
            }
            for (int round = 0; round < 3; round++) { // first occurrences, then warm duplicates
                for (StreamRecord<String> record : records) {
                    h.processElement(record);
                }
            }
            judge(op);
            assertThat(h.getOutput()).as(config.toString()).hasSize(records.size());
            Allocations.Measured m =
                    Allocations.measure(
                            () -> {
                                for (StreamRecord<String> record : records) {
                                    h.processElement(record);
                                }
                                judge(op);
                            });
            assertThat(m.thrown()).isNull();
            assertThat(h.getOutput()).as(config.toString()).hasSize(records.size());
            assertThat((double) m.bytes() / records.size())
                    .as("bytes per duplicate, %s, %s", m.bytes(), config)
                    .isLessThan(1.0);
        }
    }

    private static void judge(Built op) throws Exception {
        judge(op.operator);
    }

    /**
     * A bundle judges its events grouped by shard, yet its outputs leave in arrival order, and the
     * occurrence of an id that passes is the first to arrive: the model is the events judged one at
     * a time (for each id its first occurrence, in input order), on every backend, over two bundles
     * (256 events, then 44 judged at the end).
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void aBundleJudgedByShardLetsItsOutputsOutInArrivalOrder(Backend backend) throws Exception {
        IdSelector<String> ids = IdSelector.ofString(s -> s.substring(0, s.indexOf('|')));
        DedupConfig config = DedupConfig.builder().expectedItems(10_000).fpp(0.001).build();
        List<String> events = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            events.add("id-" + (i % 100) + "|" + i);
        }
        java.util.Collections.shuffle(events, new java.util.Random(42));
        List<String> expected = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String e : events) {
            if (seen.add(e.substring(0, e.indexOf('|')))) {
                expected.add(e);
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        @SuppressWarnings("unchecked")
        var t =
                (OneInputTransformation<String, String>)
                        BloomDedup.global(env.fromData("x|0"), ids, config).getTransformation();
        @SuppressWarnings("unchecked")
        var keys = (Shards.Selector<String>) t.getStateKeySelector();
        @SuppressWarnings("unchecked")
        var op =
                (OneInputStreamOperator<String, String>)
                        ((SimpleOperatorFactory<String>) t.getOperatorFactory()).getOperator();
        try (var h = new KeyedOneInputStreamOperatorTestHarness<>(op, keys, Types.INT, 128, 1, 0)) {
            h.setStateBackend(backend.create());
            h.open();
            for (String e : events) {
                h.processElement(new StreamRecord<>(e));
            }
            judge(op);
            assertThat(h.extractOutputValues()).isEqualTo(expected);
            assertThat(expected).hasSize(100);
        }
    }

    private static void judge(OneInputStreamOperator<?, ?> op) throws Exception {
        ((DedupOperator<?, ?>) op).judgeBundleNow();
    }

    /** The operator and shard selector that BloomDedup.global adds for string ids. */
    record Built(OneInputStreamOperator<String, String> operator, Shards.Selector<String> keys) {
        String shape() {
            return StateShape.of(
                            ((DedupOperator<?, ?>) operator).configForTests(),
                            DedupConfig.DEFAULT_SHARDS)
                    .encode();
        }
    }

    @SuppressWarnings("unchecked")
    static Built operator(DedupConfig config) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        SingleOutputStreamOperator<String> out =
                BloomDedup.global(env.fromData("x"), IdSelector.ofString(s -> s), config);
        var t = (OneInputTransformation<String, String>) out.getTransformation();
        var op =
                (OneInputStreamOperator<String, String>)
                        ((SimpleOperatorFactory<String>) t.getOperatorFactory()).getOperator();
        return new Built(op, (Shards.Selector<String>) t.getStateKeySelector());
    }
}
