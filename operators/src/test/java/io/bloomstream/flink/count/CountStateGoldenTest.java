package io.bloomstream.flink.count;

import static io.bloomstream.testing.GoldenSnapshots.SET_BITS_SINCE;
import static io.bloomstream.testing.GoldenSnapshots.VERSIONS;
import static io.bloomstream.testing.GoldenSnapshots.file;
import static io.bloomstream.testing.GoldenSnapshots.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.HashStrategy;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.KeyedEvents;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Restores the committed snapshots of the count and overlap operators under {@code
 * src/test/resources/savepoints} for every released state layout (see {@link
 * io.bloomstream.testing.GoldenSnapshots}): {@code 0.1} (filter metadata layout 1), {@code 0.2}
 * (layout 2), {@code 0.3} and {@code 0.4} (layout 3: count and overlap metadata record each stage's
 * set bits), all hashed with XXH3-128 and restored with {@code hashStrategy(XXH3_128)}, and {@code
 * 0.5} (layout 3 under the 64-bit hash path, the default), on both backends. The estimates after a
 * restore equal those of a full scan of the restored pages (how estimates were computed before the
 * set bits were kept), and state without set bits records them when first read. The files are
 * written by {@link #writeSnapshots} with {@code -Dbloomstream.writeSnapshots=true
 * -Dbloomstream.snapshotVersion=V}.
 */
class CountStateGoldenTest {

    /** The released layouts, and 0.5: the same layout 3 under the 64-bit hash path (XXH3_64). */
    static final List<String> COUNT_VERSIONS =
            java.util.stream.Stream.concat(VERSIONS.stream(), java.util.stream.Stream.of("0.5"))
                    .toList();

    /** Whether {@code version} hashed with XXH3-128 (0.4 and before). */
    static boolean hashed128(String version) {
        return version.compareTo("0.5") < 0;
    }

    static CountConfig countConfig(String version) {
        CountConfig.Builder b = CountFunctionTest.eventTime(1000);
        return (hashed128(version) ? b.hashStrategy(HashStrategy.XXH3_128) : b).build();
    }

    static CountConfig overlapConfig(String version) {
        CountConfig.Builder b =
                BloomOverlapTest.builder(
                        FilterSizing.builder().expectedItems(2000).fpp(0.01).fixed().build());
        return (hashed128(version) ? b.hashStrategy(HashStrategy.XXH3_128) : b).build();
    }

    static KeyedTwoInputStreamOperatorTestHarness<String, String, String, OverlapEstimate> overlap(
            CountConfig config, Backend backend) throws Exception {
        var h =
                new KeyedTwoInputStreamOperatorTestHarness<>(
                        new KeyedCoProcessOperator<>(
                                new BloomOverlap.OverlapFunction<String, String, String>(
                                        KeyedEvents.idSelector(),
                                        KeyedEvents.idSelector(),
                                        config,
                                        BloomOverlapTest.REJECTED_A,
                                        BloomOverlapTest.REJECTED_B)),
                        KeyedEvents::key,
                        KeyedEvents::key,
                        Types.STRING);
        h.setStateBackend(backend.create());
        return h;
    }

    /** Count: 5 keys, 200 ids each, every id twice; the replay after restore counts nothing. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void countSnapshotsRestore(Backend backend) throws Exception {
        for (String version : COUNT_VERSIONS) {
            OperatorSubtaskState state = read("count", version, backend);
            try (var h = CountFunctionTest.harness(countConfig(version), backend)) {
                h.initializeState(state);
                h.open();
                for (int i = 0; i < 1000; i++) {
                    h.processElement("k" + (i % 5) + "," + i, 500);
                }
                Map<String, CountEstimate> scanned = new TreeMap<>();
                CountStateScan restored = CountStateScan.count(h);
                for (int k = 0; k < 5; k++) {
                    FilterMeta meta = restored.meta("k" + k);
                    assertThat(meta.slots.get(0).get(0).setBits)
                            .as("%s: set bits recorded", version)
                            .matches(
                                    b ->
                                            version.compareTo(SET_BITS_SINCE) >= 0
                                                    ? b >= 0
                                                    : b == FilterMeta.UNKNOWN_SET_BITS);
                    Map<Long, long[]> pages = restored.pages("k" + k);
                    long[] bits = CountStateScan.scan(pages, 0, meta.slots.get(0).size());
                    scanned.put(
                            "k" + k,
                            CountEstimate.of(
                                    "k" + k,
                                    CountStateScan.estimate(
                                            meta, 0, bits, countConfig(version).hasher()),
                                    meta.slots.get(0).size(),
                                    0,
                                    true));
                }
                h.processWatermark(new Watermark(Long.MAX_VALUE));
                Map<String, CountEstimate> finals = new TreeMap<>();
                for (CountEstimate e : h.extractOutputValues()) {
                    if (e.isFinal) {
                        finals.put(String.valueOf(e.key), e);
                    }
                }
                assertThat(finals).as(version).hasSize(5);
                for (CountEstimate e : finals.values()) {
                    CountEstimate scan = scanned.get(e.key);
                    assertThat(e.estimate)
                            .as("%s %s: as by a scan", version, e)
                            .isEqualTo(scan.estimate);
                    assertThat(e.standardError).isEqualTo(scan.standardError);
                    assertThat(e.bitsSet).isEqualTo(scan.bitsSet);
                    assertThat(restored.meta(e.key).slots.get(0).get(0).setBits)
                            .as("%s: recorded after the first read", version)
                            .isEqualTo(scan.bitsSet);
                    // 200 distinct per key; 3 stated standard errors.
                    assertThat(Math.abs(e.estimate - 200))
                            .as("%s %s", version, e)
                            .isLessThanOrEqualTo(3 * e.standardError + 1);
                }
            }
        }
    }

    /** Overlap: A = [0, 500), B = [250, 750) of one key. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void overlapSnapshotsRestore(Backend backend) throws Exception {
        for (String version : COUNT_VERSIONS) {
            OperatorSubtaskState state = read("overlap", version, backend);
            try (var h = overlap(overlapConfig(version), backend)) {
                h.initializeState(state);
                h.open();
                h.processBothWatermarks(new Watermark(Long.MAX_VALUE));
                List<OverlapEstimate> out = h.extractOutputValues();
                assertThat(out).as(version).isNotEmpty();
                OverlapEstimate e = out.get(out.size() - 1);
                assertThat(e.isFinal).isTrue();
                // As emissions computed them by scans of the pages before set bits were kept.
                CountStateScan a = CountStateScan.overlap(h, "a");
                CountStateScan b = CountStateScan.overlap(h, "b");
                FilterMeta meta = a.meta("site");
                var hasher = overlapConfig(version).hasher();
                var pagesA = a.pages("site");
                var pagesB = b.pages("site");
                assertThat(e.a)
                        .as(version)
                        .isEqualTo(
                                CountStateScan.estimate(
                                                meta, 0, CountStateScan.scan(pagesA, 0, 1), hasher)
                                        .estimate());
                assertThat(e.b)
                        .isEqualTo(
                                CountStateScan.estimate(
                                                meta, 0, CountStateScan.scan(pagesB, 0, 1), hasher)
                                        .estimate());
                assertThat(e.union)
                        .isEqualTo(
                                CountStateScan.unionEstimate(meta, pagesA, pagesB, hasher)
                                        .estimate());
                assertThat(Math.abs(e.a - 500)).isLessThanOrEqualTo(3 * e.aError + 1);
                assertThat(Math.abs(e.b - 500)).isLessThanOrEqualTo(3 * e.bError + 1);
                assertThat(Math.abs(e.intersection - 250))
                        .isLessThanOrEqualTo(3 * e.intersectionError + 1);
            }
        }
    }

    /**
     * State hashed with XXH3-128 (0.4) under the default config (XXH3-64): the first event of a
     * restored key fails naming both strategies and the setting that restores it, not a count made
     * of two hashes.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void stateOfTheOldStrategyFailsUnderTheDefaultNamingTheSetting(Backend backend)
            throws Exception {
        OperatorSubtaskState state = read("count", "0.4", backend);
        try (var h = CountFunctionTest.harness(countConfig("0.5"), backend)) {
            h.initializeState(state);
            h.open();
            assertThatThrownBy(() -> h.processElement("k0,new-id", 500))
                    .hasStackTraceContaining("XXH3_128")
                    .hasStackTraceContaining("XXH3_64")
                    .hasStackTraceContaining("hashStrategy");
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        String version = System.getProperty("bloomstream.snapshotVersion", "0.5");
        for (Backend backend : Backend.values()) {
            try (var h = CountFunctionTest.harness(countConfig(version), backend)) {
                h.open();
                for (int i = 0; i < 2000; i++) {
                    h.processElement("k" + (i % 5) + "," + (i % 1000), 100 + i / 10);
                }
                OperatorSnapshotUtil.writeStateHandle(
                        h.snapshot(1, 1), file("count", version, backend).toString());
            }
            try (var h = overlap(overlapConfig(version), backend)) {
                h.open();
                for (int i = 0; i < 500; i++) {
                    h.processElement1("site," + i, 1);
                    h.processElement2("site," + (250 + i), 1);
                }
                OperatorSnapshotUtil.writeStateHandle(
                        h.snapshot(1, 1), file("overlap", version, backend).toString());
            }
        }
    }
}
