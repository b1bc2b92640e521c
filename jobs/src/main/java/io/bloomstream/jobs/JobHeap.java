package io.bloomstream.jobs;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.flink.FilterSizing;
import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.flink.state.ExactEntrySize;
import io.bloomstream.jobs.io.Counts;
import io.bloomstream.jobs.io.Durations;
import io.bloomstream.jobs.io.Rates;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The heap {@link DefaultHeap} gives a command started without one, sized from its flags: what the
 * job's state needs on Flink's heap backend, plus a measured base for the JVM and Flink's embedded
 * mini-cluster, and never less than a floor. A larger heap than the job needs costs resident memory
 * (the collector lets the heap grow with the allocation rate before it collects) and no speed; a
 * smaller one costs collections.
 *
 * <pre>
 * heap = min(max(FLOOR, BASE + state + caches + exact, 4 * cache per instance), 3/4 of memory)
 * </pre>
 *
 * <ul>
 *   <li>{@code dedup} without {@code --key-field}: {@code state} is the first cascade stage of each
 *       generation for {@code --expected-items} at {@code --fpp} ({@link DedupConfig#stageSpec},
 *       {@code --retention} giving the generations), each page with {@value #PAGE_OVERHEAD} bytes
 *       of the state map's entry and the array's header; {@code caches} the write-back cache of
 *       each parallel instance ({@code --parallelism}, 2 locally), its share of the state plus a
 *       quarter, at least 64 MiB ({@link DedupConfig#cacheBytesFor}), which takes at most a quarter
 *       of the heap (hence the third term); with {@code --exact}, {@code exact} is {@value
 *       #EXACT_HEADROOM} times the expected items' entries, each taken as a 36-character id ({@link
 *       ExactEntrySize#onHeap}: 120 bytes), the rest room for the collector to work in.
 *   <li>{@code count} without {@code --key-field}: {@code state} is one filter for {@code
 *       --expected-items} at the default rate ({@link FilterSizing#stageSpec}); no cache.
 *   <li>{@code screen}: {@code state} is {@value #FILTER_COPIES} times the filter file's bytes (the
 *       filter as loaded, and a new version loaded beside it), when the file is on the local file
 *       system.
 * </ul>
 *
 * <p>The heap stays within three quarters of the machine's memory (a container's limit, where the
 * JVM runs in one), but not under the floor: a job that needs more fails with an {@code
 * OutOfMemoryError} rather than sending the machine into swap.
 *
 * <p>Any other command ({@code sql}, {@code frontier}, the tools), a per-key run (the number of
 * keys is the stream's), a filter on another file system, or flags that do not parse (the command
 * reports them) get {@link DefaultHeap#DEFAULT}.
 */
final class JobHeap {

    /** The least heap of a stream command: the speed of larger heaps at 10^6 to 10^7 ids. */
    static final long FLOOR_MIB = 512;

    /** The JVM and the embedded mini-cluster with a small job, measured (see docs/cli.md). */
    static final long BASE_MIB = 256;

    /** Heap bytes of a state page besides its bits: the array's header and the map's entry. */
    static final int PAGE_OVERHEAD = 64;

    /** Exact mode's entries times this: the live entries and room for the collector. */
    static final double EXACT_HEADROOM = 1.5;

    /** A screen's filter file times this: the loaded filter and a new version beside it. */
    static final int FILTER_COPIES = 2;

    /** An id as long as a UUID's text: the size exact mode's entries are taken for. */
    static final String LONG_ID = "0b7c5e8e-4b1d-4f0e-9a59-1f6c2b9d7e31";

    /** The parallelism of a local run without {@code --parallelism}. */
    static final int LOCAL_PARALLELISM = 2;

    private static final long MIB = 1L << 20;

    private JobHeap() {}

    /**
     * The heap in MiB for the command line {@code args} on a machine of {@code memoryBytes}, or 0
     * when its flags do not size it (then {@link DefaultHeap#DEFAULT}).
     *
     * @param fileBytes the size of a local file, or -1 if it is not one (a URI, missing)
     * @param memoryBytes the machine's memory, or 0 if not known (then no cap); asked only for a
     *     heap above the floor
     */
    static long mib(String[] args, ToLongFunction<String> fileBytes, LongSupplier memoryBytes) {
        long mib = uncapped(args, fileBytes);
        if (mib <= FLOOR_MIB) {
            return mib;
        }
        long memory = memoryBytes.getAsLong();
        return memory <= 0 ? mib : Math.min(mib, Math.max(FLOOR_MIB, memory / 4 * 3 / MIB));
    }

    private static long uncapped(String[] args, ToLongFunction<String> fileBytes) {
        if (args.length == 0 || value(args, "--key-field") != null) {
            return 0;
        }
        try {
            switch (args[0]) {
                case "dedup":
                    return dedup(args);
                case "count":
                    long items = items(args);
                    FilterSizing sizing = FilterSizing.builder().expectedItems(items).build();
                    return heap(stateBytes(sizing.stageSpec(items, sizing.fpp(), 0)), 0, 0, 1);
                case "screen":
                    String filter = value(args, "--filter");
                    long bytes = filter == null ? -1 : fileBytes.applyAsLong(filter);
                    return bytes < 0 ? 0 : heap(FILTER_COPIES * bytes, 0, 0, 1);
                default:
                    return 0;
            }
        } catch (RuntimeException e) {
            return 0; // a flag that does not parse: the command says so
        }
    }

    private static long dedup(String[] args) {
        long items = items(args);
        String f = value(args, "--fpp");
        double fpp = f == null ? DedupConfig.DEFAULT_FPP : Rates.parse(f);
        String p = value(args, "--parallelism");
        int parallelism = p == null ? LOCAL_PARALLELISM : Integer.parseInt(p.trim());
        if (parallelism < 1) {
            throw new IllegalArgumentException("--parallelism must be >= 1, was " + parallelism);
        }
        long exact =
                has(args, "--exact")
                        ? (long) (EXACT_HEADROOM * items * ExactEntrySize.onHeap(LONG_ID))
                        : 0;
        String retention = value(args, "--retention");
        if (retention == null && underFloor(items, fpp, parallelism, exact)) {
            return FLOOR_MIB; // without building a DedupConfig: 130 ms of the launcher's start
        }
        return sized(
                items,
                fpp,
                parallelism,
                exact,
                retention == null ? null : Durations.parseDuration(retention));
    }

    /** The heap of a dedup from the operator's sizing, in MiB. */
    static long sized(long items, double fpp, int parallelism, long exact, Duration retention) {
        DedupConfig.Builder builder = DedupConfig.builder().expectedItems(items).fpp(fpp);
        if (retention != null) {
            builder.retention(retention, TimeDomain.PROCESSING_TIME);
        }
        DedupConfig config = builder.build();
        long state = config.generations() * stateBytes(config.stageSpec(items, 0));
        long cachePerInstance = config.cacheBytesFor(state / parallelism, Long.MAX_VALUE);
        return heap(state, cachePerInstance, exact, parallelism);
    }

    /**
     * Whether the heap of a dedup without retention is the floor for certain, from an upper bound
     * of its state: twice the classic Bloom bytes, n ln(1/p) / ln(2)^2 bits (blocked pages cost at
     * most 16% more bits, {@link FilterSizing#cappedStatePageBits}, and the pages' overhead 25% of
     * a 2048-bit page: 1.45 times). Building the {@link DedupConfig}, whose sizing searches the
     * page shapes, takes 130 ms of the launcher's start; at the floor it would change nothing.
     */
    static boolean underFloor(long items, double fpp, int parallelism, long exactBytes) {
        double ln2 = Math.log(2);
        double state = 2 * items * Math.log(1 / fpp) / (ln2 * ln2) / 8;
        double cachePerInstance =
                Math.max(DedupConfig.DEFAULT_CACHE_BYTES, 1.25 * state / parallelism);
        double bytes = BASE_MIB * MIB + state + parallelism * cachePerInstance + exactBytes;
        return Math.max(bytes, 4 * cachePerInstance) <= FLOOR_MIB * MIB;
    }

    /** max(FLOOR, BASE + state + caches + exact, 4 * cache), in MiB rounded up. */
    static long heap(long stateBytes, long cachePerInstance, long exactBytes, int parallelism) {
        long bytes = BASE_MIB * MIB + stateBytes + parallelism * cachePerInstance + exactBytes;
        bytes = Math.max(bytes, 4 * cachePerInstance);
        return Math.max(FLOOR_MIB, (bytes + MIB - 1) / MIB);
    }

    /** The heap bytes of a filter's bits: its pages, each with {@value #PAGE_OVERHEAD} bytes. */
    static long stateBytes(FilterSpec spec) {
        long pages = spec.isClassic() ? 1 : spec.pages();
        return (spec.bits() + 7) / 8 + pages * PAGE_OVERHEAD;
    }

    private static long items(String[] args) {
        String items = value(args, "--expected-items");
        return items == null ? DedupConfig.DEFAULT_EXPECTED_ITEMS : Counts.parse(items);
    }

    /** The value of {@code --flag V} or {@code --flag=V} among {@code args}, the last; or null. */
    static String value(String[] args, String flag) {
        String value = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals(flag) && i + 1 < args.length) {
                value = args[i + 1];
            } else if (args[i].startsWith(flag + "=")) {
                value = args[i].substring(flag.length() + 1);
            }
        }
        return value;
    }

    private static boolean has(String[] args, String flag) {
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals(flag) || args[i].equals(flag + "=true")) {
                return true;
            }
        }
        return false;
    }
}
