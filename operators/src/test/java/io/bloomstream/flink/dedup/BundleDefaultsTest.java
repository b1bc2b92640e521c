package io.bloomstream.flink.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.testing.Backend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.junit.jupiter.api.Test;

/**
 * Tests for bundles as the default (issue 21): the default config judges events in bundles of
 * {@value DedupConfig#DEFAULT_BUNDLE_SIZE} or 10 ms; an event waits at most the delay of processing
 * time, a full bundle is judged at once, a watermark is forwarded only after the outputs of the
 * events before it, and {@link DedupConfig.Builder#noBundles()} turns them off. (That bundles judge
 * exactly as one at a time is {@link BundleDifferentialTest}'s.)
 */
class BundleDefaultsTest {

    @Test
    void theDefaultIsBundlesOf256Or10Ms() {
        DedupConfig c = DedupConfig.builder().build();
        assertThat(c.bundleSize()).isEqualTo(256).isEqualTo(DedupConfig.DEFAULT_BUNDLE_SIZE);
        assertThat(c.bundleDelay()).isEqualTo(Duration.ofMillis(10));
        DedupConfig off = DedupConfig.builder().noBundles().build();
        assertThat(off.bundleSize()).isZero();
    }

    @Test
    void anEventWaitsAtMostTheBundleDelay() throws Exception {
        try (var h = DedupHarness.create(DedupConfig.builder().build(), Backend.HEAP, 1, 0)) {
            h.open();
            h.setProcessingTime(1_000);
            h.processElement("a,1", 0);
            h.processElement("a,2", 0);
            h.processElement("a,1", 0);
            assertThat(h.extractOutputValues()).as("waiting in the bundle").isEmpty();
            h.setProcessingTime(1_009);
            assertThat(h.extractOutputValues()).as("before the delay").isEmpty();
            h.setProcessingTime(1_010);
            assertThat(h.extractOutputValues()).containsExactly("a,1", "a,2");
            h.getOutput().clear();
            // the next bundle gets its own delay, from its first event
            h.setProcessingTime(2_000);
            h.processElement("a,3", 0);
            h.setProcessingTime(2_010);
            assertThat(h.extractOutputValues()).containsExactly("a,3");
        }
    }

    @Test
    void aFullBundleIsJudgedAtOnce() throws Exception {
        try (var h = DedupHarness.create(DedupConfig.builder().build(), Backend.HEAP, 1, 0)) {
            h.open();
            for (int i = 0; i < DedupConfig.DEFAULT_BUNDLE_SIZE; i++) {
                h.processElement("a," + i, 0);
            }
            assertThat(h.extractOutputValues()).hasSize(DedupConfig.DEFAULT_BUNDLE_SIZE);
            h.processElement("a,next", 0);
            assertThat(h.extractOutputValues()).hasSize(DedupConfig.DEFAULT_BUNDLE_SIZE);
        }
    }

    @Test
    void aWatermarkIsForwardedAfterTheOutputsOfTheEventsBeforeIt() throws Exception {
        try (var h = DedupHarness.create(DedupConfig.builder().build(), Backend.HEAP, 1, 0)) {
            h.open();
            h.processElement("a,1", 10);
            h.processElement("a,2", 20);
            h.processWatermark(30);
            List<Object> out = new ArrayList<>(h.getOutput());
            assertThat(out).hasSize(3);
            assertThat(((StreamRecord<?>) out.get(0)).getValue()).isEqualTo("a,1");
            assertThat(((StreamRecord<?>) out.get(1)).getValue()).isEqualTo("a,2");
            assertThat(out.get(2)).isEqualTo(new Watermark(30));
        }
    }

    @Test
    void withoutBundlesEachEventIsJudgedAsItArrives() throws Exception {
        DedupConfig off = DedupConfig.builder().noBundles().build();
        try (var h = DedupHarness.create(off, Backend.HEAP, 1, 0)) {
            h.open();
            h.processElement("a,1", 0);
            assertThat(h.extractOutputValues()).containsExactly("a,1");
            assertThat(((DedupOperator<?, ?>) h.getOperator()).bundled()).isZero();
        }
    }
}
