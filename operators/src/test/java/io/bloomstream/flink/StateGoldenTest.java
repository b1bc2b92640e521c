package io.bloomstream.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.DedupHarness.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Restores the committed operator snapshots of the count, overlap and screen operators under {@code
 * src/test/resources/savepoints}, for every released state layout: {@code 0.1} (filter metadata
 * layout 1), {@code 0.2} (layout 2) and {@code 0.3} (the screen's broadcast state also records the
 * file's checksum and the last command's sequence number) and {@code 0.4} (layout 3: count and
 * overlap metadata record each stage's set bits). Keyed state is committed for both backends. The
 * estimates after a restore equal those of a full scan of the restored pages (how estimates were
 * computed before the set bits were kept), and state without set bits records them when first read.
 * The files are written by {@link #writeSnapshots} with {@code -Dbloomstream.writeSnapshots=true
 * -Dbloomstream.snapshotVersion=V}; the 0.1 files were written by this class run against the 0.1
 * code.
 */
class StateGoldenTest {

    static final List<String> VERSIONS = List.of("0.1", "0.2", "0.3", "0.4");

    /** The first version whose count and overlap metadata record set bits (layout 3). */
    static final String SET_BITS_SINCE = "0.4";

    static final String SCREEN_FILTER = "src/test/resources/savepoints/screen-filter.bloom";

    static Path file(String operator, String version, Backend backend) {
        return Path.of(
                "src/test/resources/savepoints/"
                        + operator
                        + "-"
                        + version
                        + (backend == null ? "" : "-" + backend.name().toLowerCase())
                        + ".snapshot");
    }

    static OperatorSubtaskState read(String operator, String version, Backend backend)
            throws Exception {
        return OperatorSnapshotUtil.readStateHandle(file(operator, version, backend).toString());
    }

    static CountConfig countConfig() {
        return BloomCountFunctionTest.eventTime(1000).build();
    }

    static CountConfig overlapConfig() {
        return BloomOverlapTest.config(
                DedupConfig.builder().expectedItems(2000).fpp(0.01).fixed().build());
    }

    static KeyedTwoInputStreamOperatorTestHarness<String, String, String, OverlapEstimate> overlap(
            Backend backend) throws Exception {
        var h =
                new KeyedTwoInputStreamOperatorTestHarness<>(
                        new KeyedCoProcessOperator<>(
                                new BloomOverlap.OverlapFunction<String, String, String>(
                                        DedupHarness.idSelector(),
                                        DedupHarness.idSelector(),
                                        overlapConfig(),
                                        BloomOverlapTest.REJECTED_A,
                                        BloomOverlapTest.REJECTED_B)),
                        DedupHarness::key,
                        DedupHarness::key,
                        Types.STRING);
        h.setStateBackend(backend.create());
        return h;
    }

    static ScreenConfig<String> screenConfig() {
        return ScreenFunctionTest.config(SCREEN_FILTER);
    }

    /** Count: 5 keys, 200 ids each, every id twice; the replay after restore counts nothing. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void countSnapshotsRestore(Backend backend) throws Exception {
        for (String version : VERSIONS) {
            OperatorSubtaskState state = read("count", version, backend);
            try (var h = BloomCountFunctionTest.harness(countConfig(), backend)) {
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
                                            meta, 0, bits, countConfig().filter().hasher()),
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
        for (String version : VERSIONS) {
            OperatorSubtaskState state = read("overlap", version, backend);
            try (var h = overlap(backend)) {
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
                var hasher = overlapConfig().filter().hasher();
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

    /** Screen: the live add and remove of the snapshot are in force after the restore. */
    @Test
    void screenSnapshotsRestore() throws Exception {
        for (String version : VERSIONS) {
            OperatorSubtaskState state =
                    OperatorSnapshotUtil.readStateHandle(file("screen", version, null).toString());
            try (var h =
                    ScreenFunctionTest.open(
                            new ScreenFunction<>(
                                    screenConfig(),
                                    ScreenFunctionTest.FLAGGED,
                                    ScreenFunctionTest.REJECTED),
                            state)) {
                h.processElement("new@spam.example,a@b.example", 1);
                h.processElement("phisher@evil.example,a@b.example", 2);
                h.processElement("spammer@bad.example,a@b.example", 3);
                assertThat(ScreenFunctionTest.clean(h))
                        .as(version)
                        .containsExactly("phisher@evil.example,a@b.example");
                assertThat(ScreenFunctionTest.flagged(h)).hasSize(2);
            }
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "bloomstream.writeSnapshots", matches = "true")
    void writeSnapshots() throws Exception {
        String version = System.getProperty("bloomstream.snapshotVersion", "0.3");
        Files.createDirectories(Path.of(SCREEN_FILTER).getParent());
        if (!Files.exists(Path.of(SCREEN_FILTER))) {
            ScreenFunctionTest.writeFilter(
                    Path.of(SCREEN_FILTER),
                    Normalization.EMAIL,
                    Hasher.defaultHasher(),
                    "spammer@bad.example",
                    "Phisher@Evil.example");
        }
        for (Backend backend : Backend.values()) {
            try (var h = BloomCountFunctionTest.harness(countConfig(), backend)) {
                h.open();
                for (int i = 0; i < 2000; i++) {
                    h.processElement("k" + (i % 5) + "," + (i % 1000), 100 + i / 10);
                }
                OperatorSnapshotUtil.writeStateHandle(
                        h.snapshot(1, 1), file("count", version, backend).toString());
            }
            try (var h = overlap(backend)) {
                h.open();
                for (int i = 0; i < 500; i++) {
                    h.processElement1("site," + i, 1);
                    h.processElement2("site," + (250 + i), 1);
                }
                OperatorSnapshotUtil.writeStateHandle(
                        h.snapshot(1, 1), file("overlap", version, backend).toString());
            }
        }
        if (!version.equals(VERSIONS.get(VERSIONS.size() - 1))) {
            return; // screen state is written by its current layout only: keep older files
        }
        try (var h =
                ScreenFunctionTest.open(
                        new ScreenFunction<>(
                                screenConfig(),
                                ScreenFunctionTest.FLAGGED,
                                ScreenFunctionTest.REJECTED),
                        null)) {
            h.processBroadcastElement(ScreenCommand.add("new@spam.example").withSequence(1), 1);
            h.processBroadcastElement(
                    ScreenCommand.remove("phisher@evil.example").withSequence(2), 2);
            OperatorSnapshotUtil.writeStateHandle(
                    h.snapshot(1, 10), file("screen", version, null).toString());
        }
    }
}
