package io.bloomstream.flink.dedup;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.internal.BootstrapOperator;
import io.bloomstream.flink.internal.BootstrapResults;
import io.bloomstream.flink.internal.ContiguousKeyGroups;
import io.bloomstream.flink.internal.Shards;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.streaming.api.datastream.DataStream;

/**
 * Writes the dedup state of ids seen before (yesterday's ids, an exact dedup's keys) into a
 * savepoint, so that a {@link BloomDedup} job started from it already knows them. Needs
 * flink-state-processor-api on the class path (nothing else in the library does):
 *
 * <pre>{@code
 * DedupConfig config = DedupConfig.builder().expectedItems(10_000_000).fpp(0.001).build();
 * StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
 * env.setRuntimeMode(RuntimeExecutionMode.BATCH);
 * DataStream<Event> seen = ...; // bounded
 * SavepointWriter.newSavepoint(env, new HashMapStateBackend(), 128)
 *         .withOperator(
 *                 OperatorIdentifier.forUid(BloomDedup.DEFAULT_UID),
 *                 DedupBootstrap.global(seen, IdSelector.ofString(Event::id), config))
 *         .write("file:///savepoints/bootstrap");
 * env.execute("bootstrap");
 * // then: flink run -s file:///savepoints/bootstrap, the job calling
 * // BloomDedup.global(events, IdSelector.ofString(Event::id), config)
 * }</pre>
 *
 * <p>It runs the dedup operator itself, the one {@link BloomDedup} builds from the same config (its
 * function, shards and per-shard capacity), over the ids, and snapshots it at the end of the input:
 * every state the job restores (filter metadata and pages, exact mode's entries, the recorded shape
 * of the state, the watermark floor) is written by the code that reads it. What it would emit is
 * discarded.
 *
 * <p>The guarantee: a job restored from the savepoint, with the same uid, mode (per key with the
 * same keys, or global) and config, passes none of the bootstrapped ids (per key: for their key);
 * in exact mode it passes every id not bootstrapped, else such an id is dropped only as a false
 * positive of the filter, at most fpp per id while the filters hold no more than expectedItems ids
 * (per key, or over the stream in global mode), the bootstrapped ones included. A job with another
 * seed, shard count, hash strategy or time domain refuses the savepoint, naming the field ({@link
 * BloomDedup}). With processing-time retention, the ids count as seen when the bootstrap reads
 * them. Ids without a usable id (null or empty) are skipped, as the job rejects them.
 *
 * <p>The bootstrap's job needs generic types enabled ({@code pipeline.generic-types}, the default):
 * the State Processor API passes its own records through Kryo. Each entry point registers on the
 * ids' environment a Kryo serializer for those records that works on JDK 17 without {@code
 * --add-opens} (Kryo's own cannot create their private nested classes there).
 *
 * <p>Each entry point also turns off the adaptive batch scheduler's choice of parallelism on the
 * ids' environment ({@code execution.batch.adaptive.auto-parallelism.enabled}): with it on, a large
 * bootstrap (2*10^6 ids at parallelism 2 in a test) had a subtask handed key groups outside the
 * range its state backend takes.
 *
 * <p>Flink's State Processor API runs the operator in a thread of its own whose failure, in Flink
 * 2.2 and 2.3, it swallows: the job then finishes with a savepoint that lacks that subtask's state
 * (the operator logs the failure and drops the rest of its input, where the thread's end would
 * otherwise leave the job waiting for ever). Check that the written {@code _metadata} has a state
 * for every subtask of the operator before using it ({@code bloomstream bootstrap} does).
 *
 * <p>Not supported (refused): event-time retention and {@link FirstBy#EVENT_TIME}, which judge ids
 * by their timestamps against a watermark a bootstrap has no good value for.
 */
@PublicEvolving
public final class DedupBootstrap {

    private DedupBootstrap() {}

    /**
     * The state of {@link BloomDedup#perKey} over {@code ids.keyBy(key, keyType)}, for {@code
     * SavepointWriter.withOperator(OperatorIdentifier.forUid(uid), ...)}. {@code key} and {@code
     * keyType} must give the job's keys, with the same serializer.
     *
     * @throws IllegalArgumentException if the config's retention is in event time or it judges the
     *     earliest event time first
     */
    public static <T, K> StateBootstrapTransformation<T> perKey(
            DataStream<T> ids,
            KeySelector<T, K> key,
            TypeInformation<K> keyType,
            IdSelector<T> id,
            DedupConfig config) {
        Objects.requireNonNull(ids, "ids");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(keyType, "keyType");
        checkSupported(config);
        DedupOperator<K, T> operator = BloomDedup.perKeyOperator(ids.getType(), id, config);
        BootstrapResults.register(ids.getExecutionEnvironment());
        ContiguousKeyGroups.require(ids.getExecutionEnvironment());
        return OperatorTransformation.bootstrapWith(ids)
                .keyBy(key, keyType)
                .transform(BootstrapOperator.factory(operator));
    }

    /**
     * The state of {@link BloomDedup#global}, for {@code
     * SavepointWriter.withOperator(OperatorIdentifier.forUid(uid), ...)}.
     *
     * @throws IllegalArgumentException if the config's retention is in event time or it judges the
     *     earliest event time first
     */
    public static <T> StateBootstrapTransformation<T> global(
            DataStream<T> ids, IdSelector<T> id, DedupConfig config) {
        Objects.requireNonNull(ids, "ids");
        checkSupported(config);
        DedupOperator<Integer, T> operator = BloomDedup.globalOperator(ids.getType(), id, config);
        BootstrapResults.register(ids.getExecutionEnvironment());
        ContiguousKeyGroups.require(ids.getExecutionEnvironment());
        // the shard of each id, as the job's keyBy routes it; the operator hashes each id itself
        Shards.Selector<T> shards = new Shards.Selector<>(id, config.shards(), config.hasher());
        return OperatorTransformation.bootstrapWith(ids)
                .keyBy(shards, Types.INT)
                .transform(BootstrapOperator.factory(operator));
    }

    private static void checkSupported(DedupConfig config) {
        Objects.requireNonNull(config, "config");
        if (config.hasRetention() && config.timeDomain() == TimeDomain.EVENT_TIME) {
            throw new IllegalArgumentException(
                    "config: a bootstrap takes no event-time retention (ids are judged against a"
                            + " watermark it has no value for), was "
                            + config);
        }
        if (config.firstBy() == FirstBy.EVENT_TIME) {
            throw new IllegalArgumentException(
                    "config: a bootstrap takes no firstBy EVENT_TIME (ids would wait for a"
                            + " watermark), was "
                            + config);
        }
    }
}
