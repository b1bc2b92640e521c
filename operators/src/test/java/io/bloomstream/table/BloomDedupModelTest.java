package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.dedup.DedupScenario;
import io.bloomstream.testing.Backend;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Tests for {@link DedupTableFunction}: the model-based differential test of the DataStream
 * operator ({@code io.bloomstream.flink.dedup.DedupModelTest}), its generated {@link
 * DedupScenario}s (bounded disorder, late bursts, far-future rows, floods past capacity,
 * watermarks, snapshots and restores with changed arguments and rescaling) replayed through the
 * operator the planner makes for a {@code BLOOM_DEDUP} call and checked row by row against the same
 * exact {@code DedupModel} (see {@link BloomDedupModelRun} for what SQL cannot express).
 * Processing-time scenarios are skipped: SQL rejects retention without {@code on_time}.
 *
 * <p>Tries: {@value #HEAP_TRIES} scenarios on the heap backend and {@value #ROCKSDB_TRIES} on
 * RocksDB by default (about a minute); {@code -Dbloomstream.modelTries=N}, the property of the
 * DataStream model test, runs N / 10 on the heap and N / 50 on RocksDB (its N is 500 heap
 * scenarios, which plan fewer operators); {@code -Dbloomstream.modelSeed=S} replaces the seeds.
 *
 * <p>False positives, with the bound of the DataStream model test: the clear firsts dropped are a
 * sum of independent Bernoulli trials of mean at most mean = sum of p_bound (fpp, or fpp (2G - 1) /
 * G under event time), asserted to be at most mean + 4.5 sqrt(mean) + 3 (a false alarm well below
 * 10^-4).
 */
@AddLifecycleHook(
        value = BloomDedupModelTest.ScaledTries.class,
        propagateTo = PropagationMode.DIRECT_DESCENDANTS)
class BloomDedupModelTest {

    static final int HEAP_TRIES = 50;
    static final int ROCKSDB_TRIES = 10;
    static final int MAX_STEPS = 150;

    private final BloomDedupModelRun.Stats stats = new BloomDedupModelRun.Stats();
    private boolean failed;

    @Provide
    Arbitrary<DedupScenario> scenarios() {
        return DedupScenario.scenarios(MAX_STEPS)
                .filter(s -> s.base().mode() != DedupScenario.Mode.PROCESSING_TIME);
    }

    @Property(tries = HEAP_TRIES, seed = "20240611", edgeCases = EdgeCasesMode.NONE)
    void heapFunctionFollowsTheModel(@ForAll("scenarios") DedupScenario scenario) throws Exception {
        check(scenario, Backend.HEAP);
    }

    @Property(tries = ROCKSDB_TRIES, seed = "31337", edgeCases = EdgeCasesMode.NONE)
    void rocksDbFunctionFollowsTheModel(@ForAll("scenarios") DedupScenario scenario)
            throws Exception {
        check(scenario, Backend.ROCKSDB);
    }

    private void check(DedupScenario scenario, Backend backend) throws Exception {
        try (BloomDedupModelRun run = new BloomDedupModelRun(scenario, backend)) {
            run.run();
            stats.add(run.stats());
        } catch (Throwable t) {
            failed = true;
            throw t;
        }
    }

    @BeforeProperty
    void resetStats() {
        stats.clearFirsts = 0;
        stats.falseDrops = 0;
        stats.expectedDrops = 0;
        failed = false;
    }

    @AfterProperty
    void falsePositivesWithinTheBound() {
        if (failed) {
            return; // shrinking replays scenarios: the counts are no longer independent trials
        }
        double mean = stats.expectedDrops;
        double bound = mean + 4.5 * Math.sqrt(mean) + 3;
        System.out.printf(
                "BLOOM_DEDUP model: %d clear firsts, %d dropped as false positives (mean bound"
                        + " %.1f, limit %.1f)%n",
                stats.clearFirsts, stats.falseDrops, mean, bound);
        assertThat((double) stats.falseDrops).isLessThanOrEqualTo(bound);
    }

    /**
     * Scales the tries by {@code -Dbloomstream.modelTries}; {@link
     * io.bloomstream.testing.ExploreSeeds} sets the seeds.
     */
    static final class ScaledTries implements AroundPropertyHook {
        @Override
        public PropertyExecutionResult aroundProperty(
                PropertyLifecycleContext context, PropertyExecutor property) {
            String tries = System.getProperty("bloomstream.modelTries");
            if (tries != null && !tries.isBlank()) {
                int base = context.attributes().tries().orElse(HEAP_TRIES);
                // The DataStream test's N is 500 heap scenarios; ours are 10x fewer by default.
                long scaled = Long.parseLong(tries.trim()) * base / (HEAP_TRIES * 10L);
                context.attributes().setTries((int) Math.max(1, scaled));
            }
            return property.execute();
        }
    }
}
