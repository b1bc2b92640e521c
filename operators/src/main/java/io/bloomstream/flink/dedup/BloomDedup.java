package io.bloomstream.flink.dedup;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.internal.HashedEvent;
import io.bloomstream.flink.internal.OperatorUids;
import io.bloomstream.flink.internal.Shards;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.util.OutputTag;

/**
 * Drops duplicate events with Bloom filters in Flink managed keyed state.
 *
 * <pre>{@code
 * DedupConfig config = DedupConfig.builder().expectedItems(10_000_000).fpp(0.001).build();
 * // one filter per user: drop repeated event ids of the same user
 * SingleOutputStreamOperator<Event> firsts =
 *         BloomDedup.perKey(events.keyBy(Event::userId), IdSelector.ofString(Event::id), config);
 * // one logical filter for the whole stream, sharded over all subtasks
 * SingleOutputStreamOperator<Event> unique =
 *         BloomDedup.global(events, IdSelector.ofString(Event::id), config);
 * DataStream<Event> bad = unique.getSideOutput(BloomDedup.rejectedTag(events.getType()));
 * }</pre>
 *
 * <p>The guarantee, per key (per shard in global mode) and id. Without retention, an occurrence
 * passes only if no earlier occurrence passed. With retention R on event time, an event without a
 * timestamp goes to {@link #rejectedTag}; an event with timestamp t + {@link
 * DedupConfig#allowedLateness()} at or before the current watermark goes to {@link #lateTag},
 * unjudged; of all other events, two occurrences whose timestamps are less than R apart never both
 * pass, in any order of arrival, and an occurrence at least R + L (L the generation length) away
 * from every passed one passes unless the filter gives a false positive. Processing-time retention
 * is the same with the task's clock. A first occurrence is dropped only as a false positive, at
 * most fpp per in-order event (fpp (2G-1)/G for out-of-order events). Every event leaves on exactly
 * one of: the main output, the duplicates output (or dropped), the late output, the rejected
 * output. Restores that change the seed, the shard count or the time domain fail with the field
 * named, for good (a {@code SuppressRestartsException}: no restart can fix them; see
 * docs/dedup.md).
 *
 * <p>Exact mode ({@link DedupConfig.Builder#exact}): the same rules without the false-positive
 * clause. No first occurrence is ever dropped (without retention: an occurrence passes if and only
 * if no earlier occurrence passed; with it, one at least R + L from every passed occurrence always
 * passes), because the filter stands in front of the ids themselves, kept in keyed state per
 * generation: its "no" costs no state read, its "maybe" reads the id's exact entry. State then
 * grows with the distinct ids (within the retention, or for ever without one).
 *
 * <p>Earliest event time ({@link DedupConfig.Builder#firstBy} {@link FirstBy#EVENT_TIME}; the
 * default, {@link FirstBy#ARRIVAL}, passes the first occurrence to arrive, at once): per key (per
 * shard) and id, the occurrence with the smallest event time passes, on equal times the first to
 * arrive, as Flink's keep-first deduplication ({@code ROW_NUMBER() OVER (PARTITION BY id ORDER BY
 * rowtime) = 1}) does. Events that are not late wait in keyed state until the watermark reaches
 * their timestamp, and leave then with it; the rules above then hold among the events judged, in
 * order of event time. A late event goes to {@link #lateTag} and does not mark its id as seen.
 * Needs event time: a retention on event time, or none.
 *
 * <p>The operator has uid and name {@value #DEFAULT_UID}; for another, as two dedups in one job
 * need, call through {@link #withUidPrefix}:
 *
 * <pre>{@code
 * BloomDedup.withUidPrefix("dedup-orders").perKey(orders.keyBy(Order::user), id, config);
 * }</pre>
 */
@PublicEvolving
public final class BloomDedup {

    /**
     * The default operator uid and name, of {@link #perKey} and {@link #global} alike (the uid of
     * earlier versions, kept so their savepoints restore): a savepoint of one mode restored into
     * the other fails (docs/upgrading.md, "Uids"); give a second mode its own uid with {@link
     * #withUidPrefix}.
     */
    public static final String DEFAULT_UID = "bloom-dedup";

    private static final String DUPLICATES_ID = "bloom-dedup-duplicates";
    private static final String REJECTED_ID = "bloom-dedup-rejected";
    private static final String LATE_ID = "bloom-dedup-late";

    /**
     * The uid and name suffix of global mode's stateless operator that hashes each id before the
     * shard {@code keyBy} (chained to the stream's operator).
     */
    static final String HASH_SUFFIX = "-hash";

    private BloomDedup() {}

    /** The side output of duplicates (when {@link DedupConfig#emitDuplicates()} is set). */
    public static <T> OutputTag<T> duplicatesTag(TypeInformation<T> type) {
        return new OutputTag<>(DUPLICATES_ID, type);
    }

    /** The side output of events without a usable id (or timestamp, under event time). */
    public static <T> OutputTag<T> rejectedTag(TypeInformation<T> type) {
        return new OutputTag<>(REJECTED_ID, type);
    }

    /**
     * The side output of event-time events that arrived too late to be judged: timestamp + {@link
     * DedupConfig#allowedLateness()} at or before the watermark.
     */
    public static <T> OutputTag<T> lateTag(TypeInformation<T> type) {
        return new OutputTag<>(LATE_ID, type);
    }

    /**
     * The dedup operators of this class with uid and name {@code uidPrefix} instead of {@value
     * #DEFAULT_UID} (the dedup operator's uid; global mode also adds a stateless step, uid {@code
     * uidPrefix + "-hash"}, that hashes each id before the shard {@code keyBy}). Give each dedup of
     * a job its own prefix, and keep it when restoring from a savepoint.
     *
     * @throws IllegalArgumentException if {@code uidPrefix} is blank
     */
    public static Named withUidPrefix(String uidPrefix) {
        return new Named(OperatorUids.checkPrefix(uidPrefix));
    }

    /**
     * One filter per key of {@code stream}, sized for {@link DedupConfig#expectedItems()} ids per
     * key. Uid and name {@value #DEFAULT_UID}.
     */
    public static <T, K> SingleOutputStreamOperator<T> perKey(
            KeyedStream<T, K> stream, IdSelector<T> id, DedupConfig config) {
        return withUidPrefix(DEFAULT_UID).perKey(stream, id, config);
    }

    /**
     * One logical filter over the whole stream: ids are sharded by hash into {@link
     * DedupConfig#shards()} virtual keys, each with a filter for expectedItems / shards ids plus
     * four standard deviations of their spread ({@link #itemsPerShard}), so the filter spreads over
     * all parallel instances and rescales with Flink's key groups. The shard count is recorded in
     * savepoints: a restore with another fails. Uid and name {@value #DEFAULT_UID}.
     *
     * <p>Each id is hashed once, by a stateless step chained to {@code stream}'s operator (uid and
     * name {@value #DEFAULT_UID}{@code -hash}, at {@code stream}'s parallelism): the event crosses
     * the shard {@code keyBy} with its id's 64-bit hash (8 bytes and a flag more on the wire), and
     * the dedup operator judges by that hash. The step keeps no state, so savepoints of jobs
     * without it (bloomstream 0.4 and before) restore unchanged. (Under {@code
     * hashStrategy(XXH3_128)}, for state of 0.4 and before, there is no such step.)
     */
    public static <T> SingleOutputStreamOperator<T> global(
            DataStream<T> stream, IdSelector<T> id, DedupConfig config) {
        return withUidPrefix(DEFAULT_UID).global(stream, id, config);
    }

    /**
     * {@link BloomDedup#perKey} and {@link BloomDedup#global} with the uid and name of {@link
     * BloomDedup#withUidPrefix}. Immutable.
     */
    @PublicEvolving
    public static final class Named {
        private final String uidPrefix;

        private Named(String uidPrefix) {
            this.uidPrefix = uidPrefix;
        }

        /** The uid and name of the operators this adds. */
        public String uidPrefix() {
            return uidPrefix;
        }

        /** See {@link BloomDedup#perKey}. */
        public <T, K> SingleOutputStreamOperator<T> perKey(
                KeyedStream<T, K> stream, IdSelector<T> id, DedupConfig config) {
            Objects.requireNonNull(stream, "stream");
            return stream.transform(
                            uidPrefix,
                            stream.getType(),
                            BloomDedup.<K, T>perKeyOperator(stream.getType(), id, config))
                    .uid(uidPrefix);
        }

        /** See {@link BloomDedup#global}. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        public <T> SingleOutputStreamOperator<T> global(
                DataStream<T> stream, IdSelector<T> id, DedupConfig config) {
            Objects.requireNonNull(stream, "stream");
            DedupOperator<Integer, T> operator = globalOperator(stream.getType(), id, config);
            Shards.Selector<T> shards = new Shards.Selector<>(id, config.shards(), config.hasher());
            if (!shards.by64()) { // state of 0.4 and before: routed by the id's shardHash
                return stream.keyBy(shards, Types.INT)
                        .transform(uidPrefix, stream.getType(), operator)
                        .uid(uidPrefix);
            }
            // The id is hashed once, here, chained to the stream's operator, and the hash travels
            // with the event to the dedup operator, which judges by it; the selector routes by it.
            SingleOutputStreamOperator<HashedEvent<T>> hashed =
                    stream.map(new HashedEvent.Hash<>(id, config.hasher(), stream.getType()))
                            .name(uidPrefix + HASH_SUFFIX)
                            .uid(uidPrefix + HASH_SUFFIX)
                            .setParallelism(stream.getParallelism());
            if (stream.getTransformation().getMaxParallelism() > 0) {
                hashed.setMaxParallelism(stream.getTransformation().getMaxParallelism());
            }
            KeyedStream<HashedEvent<T>, Integer> keyed =
                    hashed.keyBy(
                            (KeySelector<HashedEvent<T>, Integer>) (KeySelector) shards, Types.INT);
            return keyed.transform(
                            uidPrefix,
                            stream.getType(),
                            (OneInputStreamOperator<HashedEvent<T>, T>)
                                    (OneInputStreamOperator) operator)
                    .uid(uidPrefix);
        }

        @Override
        public String toString() {
            return "BloomDedup.withUidPrefix(" + uidPrefix + ")";
        }
    }

    /**
     * The dedup operator of {@link Named#perKey}: one filter per key, sized for {@link
     * DedupConfig#expectedItems()} ids ({@link DedupBootstrap} runs the same).
     */
    static <K, T> DedupOperator<K, T> perKeyOperator(
            TypeInformation<T> type, IdSelector<T> id, DedupConfig config) {
        config.checkFits(config.expectedItems(), false);
        return new DedupOperator<>(function(type, id, config, config.expectedItems(), 0), config);
    }

    /**
     * The dedup operator of {@link Named#global}, keyed by shard: each shard's filter sized by
     * {@link #itemsPerShard} ({@link DedupBootstrap} runs the same).
     */
    static <T> DedupOperator<Integer, T> globalOperator(
            TypeInformation<T> type, IdSelector<T> id, DedupConfig config) {
        long perShard = itemsPerShard(config.expectedItems(), config.shards());
        return new DedupOperator<>(function(type, id, config, perShard, config.shards()), config);
    }

    private static <K, T> DedupFunction<K, T> function(
            TypeInformation<T> type,
            IdSelector<T> id,
            DedupConfig config,
            long itemsPerKey,
            int shards) {
        return new DedupFunction<>(
                id,
                config,
                itemsPerKey,
                shards,
                duplicatesTag(type),
                rejectedTag(type),
                lateTag(type));
    }

    /**
     * The capacity of each shard's filter for {@code expectedItems} ids over {@code shards} shards:
     * the mean m = ceil(n/s) plus 4 sqrt(m). Ids fall into shards binomially (sd about sqrt(m)), so
     * with capacity m alone half the shards would pass it at the expected total (a second cascade
     * stage, or a higher rate under fixed growth); the fullest of 1024 shards is about m + 3.2 sd.
     * The headroom costs 4/sqrt(m) of state: 13% at 10^6 ids over 1024 shards, 4% at 10^7, 1.3% at
     * 10^8.
     */
    public static long itemsPerShard(long expectedItems, int shards) {
        return Shards.itemsPerShard(expectedItems, shards);
    }
}
