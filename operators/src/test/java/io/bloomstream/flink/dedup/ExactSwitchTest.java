package io.bloomstream.flink.dedup;

import static io.bloomstream.flink.dedup.DedupHarness.output;
import static io.bloomstream.flink.dedup.ExactDedupTest.exactEntries;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.testing.Backend;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;

/**
 * Exact mode switched on and off at a restore ({@link StateShape}): allowed, logged, and with the
 * documented effect on both backends; records of dedup shape 2 restore as state without exact
 * entries.
 */
class ExactSwitchTest {

    private static final DedupConfig.Builder PLAIN =
            DedupConfig.builder().expectedItems(1000).fpp(0.01);

    private static final DedupConfig OFF = PLAIN.build();
    private static final DedupConfig ON =
            DedupConfig.builder().expectedItems(1000).fpp(0.01).exact(true).build();

    private static OperatorSubtaskState run(
            DedupConfig config,
            Backend backend,
            OperatorSubtaskState from,
            int fromId,
            int toId,
            int expectPassed)
            throws Exception {
        try (var h = DedupHarness.create(config, backend, 1, 0)) {
            if (from != null) {
                h.initializeState(from);
            }
            h.open();
            for (int i = fromId; i < toId; i++) {
                h.processElement("k" + (i % 3) + "," + i, 0);
            }
            assertThat(output(h)).as(config.toString()).hasSize(expectPassed);
            return h.snapshot(1, 1);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void switchingOnLetsEarlierIdsPassOnceMoreThenJudgesExactly(Backend backend) throws Exception {
        OperatorSubtaskState plain = run(OFF, backend, null, 0, 300, 300);
        // ids 0..299 have no exact entries: each passes once more (exact mode prefers passing)
        OperatorSubtaskState exact = run(ON, backend, plain, 0, 400, 400);
        run(ON, backend, exact, 0, 400, 0);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void switchingOffKeepsTheEntriesAndSwitchingBackOnReadsThemAgain(Backend backend)
            throws Exception {
        OperatorSubtaskState exact = run(ON, backend, null, 0, 300, 300);
        OperatorSubtaskState off = run(OFF, backend, exact, 0, 400, 100);
        try (var h = DedupHarness.create(OFF, backend, 1, 0)) {
            h.initializeState(off);
            h.open();
            assertThat(exactEntries(h)).as("entries kept while off").isEqualTo(300);
        }
        // 0..299 are found in their exact entries; 300..399 came while off: no entries, pass again
        run(ON, backend, off, 0, 400, 100);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void entriesKeptWhileOffExpireWithTheirGeneration(Backend backend) throws Exception {
        DedupConfig.Builder retention =
                DedupConfig.builder()
                        .expectedItems(1000)
                        .fpp(0.01)
                        .retention(Duration.ofSeconds(10), TimeDomain.EVENT_TIME);
        OperatorSubtaskState exact;
        try (var h = DedupHarness.create(retention.exact(true).build(), backend, 1, 0)) {
            h.open();
            for (int i = 0; i < 50; i++) {
                h.processElement("a," + i, 1_000);
            }
            exact = h.snapshot(1, 1);
        }
        OperatorSubtaskState off;
        try (var h = DedupHarness.create(retention.exact(false).build(), backend, 1, 0)) {
            h.initializeState(exact);
            h.open();
            h.processElement("b,1", 1_000);
            assertThat(exactEntries(h)).isEqualTo(50);
            off = h.snapshot(2, 2);
        }
        try (var h = DedupHarness.create(retention.exact(false).build(), backend, 1, 0)) {
            h.initializeState(off); // a second restore without exact mode still drops them
            h.open();
            h.processWatermark(100_000);
            assertThat(exactEntries(h)).isZero();
            assertThat(DedupHarness.keysWithState(h)).isZero();
        }
    }

    @Test
    void theSwitchIsLoggedEitherWay() {
        StateShape on = StateShape.of(ON, 0);
        StateShape off = StateShape.of(OFF, 0);
        List<String> logged = new ArrayList<>();
        on.checkRestore(off, recording(logged));
        assertThat(logged)
                .singleElement()
                .asString()
                .contains("exact mode switched on")
                .contains("may pass once more");
        logged.clear();
        off.checkRestore(on, recording(logged));
        assertThat(logged)
                .singleElement()
                .asString()
                .contains("exact mode switched off")
                .contains("until their generation expires");
        assertThat(on.encode()).endsWith(";exact=true;exactEntries=true");
        assertThat(off.encode()).endsWith(";exact=false;exactEntries=false");
    }

    @Test
    void aVersion2RecordRestoresAsStateWithoutExactEntries() {
        StateShape v2 =
                StateShape.decode(
                        StateShape.of(OFF, 0)
                                .encode()
                                .replace("version=" + StateShape.VERSION, "version=2")
                                .replace(";firstBy=ARRIVAL;pendingEvents=false", "")
                                .replace(";exact=false;exactEntries=false", ""));
        assertThat(v2.encode()).startsWith("version=2;").doesNotContain("firstBy", "exact");
        List<String> logged = new ArrayList<>();
        StateShape.of(OFF, 0).checkRestore(v2, recording(logged));
        assertThat(logged).isEmpty();
        assertThat(v2.mayHoldExactEntries()).isFalse();
        StateShape.of(ON, 0).checkRestore(v2, recording(logged));
        assertThat(logged).singleElement().asString().contains("exact mode switched on");
    }

    /** A logger that keeps the messages of its {@code info} calls. */
    private static Logger recording(List<String> messages) {
        return (Logger)
                Proxy.newProxyInstance(
                        Logger.class.getClassLoader(),
                        new Class<?>[] {Logger.class},
                        (proxy, method, args) -> {
                            if (method.getName().equals("info")) {
                                messages.add(String.valueOf(args[0]));
                            }
                            return method.getReturnType() == boolean.class ? true : null;
                        });
    }
}
