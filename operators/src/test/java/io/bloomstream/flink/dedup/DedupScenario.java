package io.bloomstream.flink.dedup;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.Retention;
import io.bloomstream.flink.TimeDomain;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;

/**
 * A generated dedup scenario: a base config and a list of steps (events, watermarks, clock
 * advances, restores), all shrinkable. Times are in milliseconds; the scenario keeps a clock {@code
 * now} that events and advances move forward, and event timestamps are drawn around it.
 */
public record DedupScenario(Base base, int parallelism, List<Step> steps) {

    /** Keys with skew: k0 gets about half of the events. */
    public static final int KEYS = 5;

    /** Ids come from a small alphabet, biased to small numbers, so that repeats are common. */
    public static final int IDS = 50;

    /** The clock's start: event timestamps stay positive. */
    public static final long START = 100_000;

    /** Far-future offsets of an event's timestamp from the clock. */
    public static final long[] FAR_FUTURE = {1_000_000_000L, 1_000_000_000_000L};

    public enum Mode {
        NO_RETENTION,
        EVENT_TIME,
        PROCESSING_TIME
    }

    /** The initial config. */
    public record Base(
            Mode mode,
            long retentionMillis,
            int generations,
            long latenessMillis,
            boolean fixed,
            long expectedItems,
            int fppPercent,
            int pageBits,
            int shards,
            long seed,
            long cacheBytes,
            boolean exact,
            boolean reset) {

        /** A base without exact mode (the SQL function's tests, and bases written before it). */
        public Base(
                Mode mode,
                long retentionMillis,
                int generations,
                long latenessMillis,
                boolean fixed,
                long expectedItems,
                int fppPercent,
                int pageBits,
                int shards,
                long seed,
                long cacheBytes) {
            this(
                    mode,
                    retentionMillis,
                    generations,
                    latenessMillis,
                    fixed,
                    expectedItems,
                    fppPercent,
                    pageBits,
                    shards,
                    seed,
                    cacheBytes,
                    false,
                    false);
        }

        /** A copy to change one field of. */
        public Copy copy() {
            Copy c = new Copy();
            c.mode = mode;
            c.retentionMillis = retentionMillis;
            c.generations = generations;
            c.latenessMillis = latenessMillis;
            c.fixed = fixed;
            c.expectedItems = expectedItems;
            c.fppPercent = fppPercent;
            c.pageBits = pageBits;
            c.shards = shards;
            c.seed = seed;
            c.cacheBytes = cacheBytes;
            c.exact = exact;
            c.reset = reset;
            return c;
        }

        /** Global mode (the function gets the shard count) when shards is positive. */
        public boolean global() {
            return shards > 0;
        }

        /**
         * The allowed lateness, at most what the config allows: (G - 1)(1 + A/R) + 2 generation
         * slots for on-time events within {@link DedupConfig#MAX_ON_TIME_GENERATIONS}.
         */
        public long lateness() {
            long l = (retentionMillis + generations - 2) / (generations - 1);
            long most = (Retention.MAX_ON_TIME_GENERATIONS - 2) * l - retentionMillis;
            return Math.min(latenessMillis, most);
        }

        public DedupConfig config() {
            DedupConfig.Builder b =
                    DedupConfig.builder()
                            .expectedItems(expectedItems)
                            .fpp(fppPercent / 100.0)
                            .pageBits(pageBits)
                            .seed(seed)
                            .cacheBytes(cacheBytes)
                            .exact(exact)
                            .emitDuplicates(true);
            if (fixed) {
                b.fixed();
            }
            if (mode != Mode.NO_RETENTION) {
                b.retention(
                                Duration.ofMillis(retentionMillis),
                                mode == Mode.EVENT_TIME
                                        ? TimeDomain.EVENT_TIME
                                        : TimeDomain.PROCESSING_TIME)
                        .generations(generations)
                        .allowedLateness(Duration.ofMillis(lateness()))
                        .resetRetentionOnDuplicate(reset);
            }
            if (global()) {
                b.shards(shards);
            }
            return b.build();
        }
    }

    /** The fields of a {@link Base}, to change some of them. */
    public static final class Copy {
        Mode mode;
        long retentionMillis;
        int generations;
        long latenessMillis;
        boolean fixed;
        long expectedItems;
        int fppPercent;
        int pageBits;
        int shards;
        long seed;
        long cacheBytes;
        boolean exact;
        boolean reset;

        public Base build() {
            return new Base(
                    mode,
                    retentionMillis,
                    generations,
                    latenessMillis,
                    fixed,
                    expectedItems,
                    fppPercent,
                    pageBits,
                    shards,
                    seed,
                    cacheBytes,
                    exact,
                    reset);
        }
    }

    /** One step of a scenario. */
    public sealed interface Step permits Event, Burst, Flood, Watermark, Advance, Restore {}

    /** Where an event's timestamp lies. */
    public enum Stamp {
        /** now + offset: bounded disorder. */
        AROUND,
        /** now - offset * 8: behind the watermark unless the lateness covers it. */
        BEHIND,
        /** now + 10^9 or 10^12. */
        FAR_FUTURE,
        /** No timestamp at all. */
        NONE
    }

    /** One event: moves the clock by {@code advance}, then arrives. Id -1 is the empty id. */
    public record Event(int key, int id, Stamp stamp, long advance, int offset) implements Step {}

    /** Several events of one key, each {@code lag} behind the clock (a burst of late events). */
    public record Burst(int key, List<Integer> ids, long lag) implements Step {}

    /**
     * {@code count} events of one key at the clock with ids f{from} to f{from + count - 1}: fills
     * the key's filter past its expected items so that false positives occur (scalable growth only:
     * a fixed filter past capacity is allowed to exceed its rate). Overlapping floods repeat ids.
     */
    public record Flood(int key, int from, int count) implements Step {}

    /** A watermark {@code lag} behind the clock, sent when it is above the last one. */
    public record Watermark(long lag) implements Step {}

    /** Moves the clock (and the processing time) forward. */
    public record Advance(long millis) implements Step {}

    /** What a restore changes in the config. */
    public enum Change {
        NONE,
        // sound: the job continues
        EXPECTED_ITEMS,
        FPP,
        PAGE_BITS,
        GROWTH,
        RETENTION,
        GENERATIONS,
        ALLOWED_LATENESS,
        /** Exact mode switched on or off (allowed both ways; see {@link DedupModel}). */
        EXACT,
        // unsound: the restore must fail naming the field
        SEED,
        TIME_DOMAIN,
        RETENTION_ON_OFF,
        SHARDS;

        public boolean sound() {
            return ordinal() <= EXACT.ordinal();
        }
    }

    /**
     * Snapshot every subtask, then restore at {@code parallelism} (a rescale when it differs) with
     * the config changed by {@code change} ({@code value} picks the new value).
     */
    public record Restore(int parallelism, Change change, int value) implements Step {}

    public static Arbitrary<DedupScenario> scenarios(int maxSteps) {
        return Combinators.combine(
                        bases(),
                        Arbitraries.of(1, 2),
                        anyStep()
                                .list()
                                .ofMaxSize(maxSteps)
                                .withSizeDistribution(RandomDistribution.uniform()))
                .as(DedupScenario::new);
    }

    static Arbitrary<Base> bases() {
        Arbitrary<Mode> mode =
                Arbitraries.frequencyOf(
                        Tuple.of(6, Arbitraries.just(Mode.EVENT_TIME)),
                        Tuple.of(2, Arbitraries.just(Mode.NO_RETENTION)),
                        Tuple.of(2, Arbitraries.just(Mode.PROCESSING_TIME)));
        Arbitrary<Long> retention = Arbitraries.longs().between(10, 300);
        Arbitrary<Integer> generations = Arbitraries.integers().between(2, 6);
        Arbitrary<Long> lateness =
                Arbitraries.frequencyOf(
                        Tuple.of(3, Arbitraries.just(0L)),
                        Tuple.of(1, Arbitraries.longs().between(1, 100)));
        Arbitrary<Long> expected =
                Arbitraries.longs().between(50, 2000).withDistribution(RandomDistribution.biased());
        Arbitrary<Integer> fpp = Arbitraries.integers().between(1, 20);
        Arbitrary<Integer> pageBits = Arbitraries.of(FilterSpec.AUTO_PAGE_BITS, 512, 2048);
        Arbitrary<Integer> shards =
                Arbitraries.frequencyOf(
                        Tuple.of(4, Arbitraries.just(0)),
                        Tuple.of(1, Arbitraries.integers().between(2, 64)));
        Arbitrary<Long> seed = Arbitraries.longs();
        // The write-back cache: off, so small that nearly every event evicts a key, or the default.
        Arbitrary<Long> cache = Arbitraries.of(0L, 600L, DedupConfig.DEFAULT_CACHE_BYTES);
        // Exact mode in a third of the scenarios: the tries are shared between the modes.
        Arbitrary<Boolean> exact = Arbitraries.frequency(Tuple.of(2, false), Tuple.of(1, true));
        // Reset on duplicate in a quarter of the scenarios with a retention (ignored without).
        Arbitrary<Boolean> reset = Arbitraries.frequency(Tuple.of(3, false), Tuple.of(1, true));
        return Combinators.combine(
                        Combinators.combine(mode, retention, generations, lateness).as(Tuple::of),
                        Combinators.combine(Arbitraries.of(true, false), expected, fpp, pageBits)
                                .as(Tuple::of),
                        shards,
                        seed,
                        cache,
                        exact,
                        reset)
                .as(
                        (time, filter, s, sd, cb, ex, rs) ->
                                new Base(
                                        time.get1(),
                                        time.get2(),
                                        time.get3(),
                                        time.get4(),
                                        filter.get1(),
                                        filter.get2(),
                                        filter.get3(),
                                        filter.get4(),
                                        s,
                                        sd,
                                        cb,
                                        ex,
                                        rs));
    }

    static Arbitrary<Step> anyStep() {
        Arbitrary<Integer> key =
                Arbitraries.frequency(
                        Tuple.of(8, 0),
                        Tuple.of(4, 1),
                        Tuple.of(2, 2),
                        Tuple.of(1, 3),
                        Tuple.of(1, 4));
        Arbitrary<Integer> id =
                Arbitraries.frequencyOf(
                        Tuple.of(
                                40,
                                Arbitraries.integers()
                                        .between(0, IDS - 1)
                                        .withDistribution(RandomDistribution.biased())),
                        Tuple.of(1, Arbitraries.just(-1)));
        Arbitrary<Stamp> stamp =
                Arbitraries.frequency(
                        Tuple.of(40, Stamp.AROUND),
                        Tuple.of(4, Stamp.BEHIND),
                        Tuple.of(1, Stamp.FAR_FUTURE),
                        Tuple.of(1, Stamp.NONE));
        Arbitrary<Step> event =
                Combinators.combine(
                                key,
                                id,
                                stamp,
                                Arbitraries.longs().between(0, 20),
                                Arbitraries.integers().between(-80, 80))
                        .as(Event::new);
        Arbitrary<Step> burst =
                Combinators.combine(
                                key,
                                id.list().ofMinSize(2).ofMaxSize(8),
                                Arbitraries.longs().between(0, 600))
                        .as(Burst::new);
        Arbitrary<Step> flood =
                Combinators.combine(
                                key,
                                Arbitraries.integers().between(0, 400),
                                Arbitraries.integers().between(1, 300))
                        .as(Flood::new);
        Arbitrary<Step> watermark = Arbitraries.longs().between(0, 100).map(Watermark::new);
        Arbitrary<Step> advance = Arbitraries.longs().between(1, 400).map(Advance::new);
        Arbitrary<Step> restore =
                Combinators.combine(
                                Arbitraries.of(1, 2, 3),
                                Arbitraries.frequencyOf(
                                        Tuple.of(3, Arbitraries.just(Change.NONE)),
                                        Tuple.of(2, Arbitraries.of(Change.class))),
                                Arbitraries.integers().between(0, 3))
                        .as(Restore::new);
        return Arbitraries.frequencyOf(
                Tuple.of(60, event),
                Tuple.of(3, burst),
                Tuple.of(2, flood),
                Tuple.of(12, watermark),
                Tuple.of(4, advance),
                Tuple.of(3, restore));
    }
}
