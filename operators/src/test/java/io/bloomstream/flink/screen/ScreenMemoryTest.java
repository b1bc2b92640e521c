package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures the heap that four slots of one TaskManager take to load one large screening filter at
 * once (a restore): four private copies read through a byte array (how tasks loaded before 0.3)
 * against one shared copy decoded as it streams. Not a test of the build: run it with {@code
 * -Dbloomstream.measureMemory=true} (and {@code -Dbloomstream.filterMb=N}, default 256); the
 * figures are in benchmarks/RESULTS.md.
 */
@EnabledIfSystemProperty(named = "bloomstream.measureMemory", matches = "true")
class ScreenMemoryTest {

    private static final int SLOTS = 4;
    private static final long MB = 1 << 20;

    @TempDir Path tmp;

    @Test
    void fourSlotsLoadingOneLargeFilter() throws Exception {
        long filterMb = Long.getLong("bloomstream.filterMb", 256);
        Path file = tmp.resolve("large.bloom");
        BloomFilter f =
                BloomFilter.create(FilterSpec.of(filterMb * MB * 8, 7, 0, Hasher.defaultHasher()));
        for (int i = 0; i < 2_000_000; i++) {
            f.add(Normalization.EMAIL.apply("user" + i + "@list.example"));
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            FilterCodec.write(f, Normalization.EMAIL, out);
        }
        f = null;
        long length = Files.size(file);
        String uri = file.toUri().toString();
        System.out.printf("filter file: %d bytes (%d MiB)%n", length, length / MB);

        long base = usedAfterGc();
        resetPeaks();
        List<Object> copies =
                inParallel(
                        () -> {
                            try (InputStream in =
                                    new BufferedInputStream(Files.newInputStream(file))) {
                                return FilterCodec.readFile(in, length, null);
                            }
                        });
        long oldPeak = peak() - base;
        long oldRetained = usedAfterGc() - base;
        assertThat(copies).hasSize(SLOTS);
        copies = null;

        base = usedAfterGc();
        resetPeaks();
        List<Object> harnesses =
                inParallel(
                        () ->
                                ScreenFunctionTest.open(
                                        new ScreenFunction<>(
                                                ScreenFunctionTest.config(uri),
                                                ScreenFunctionTest.FLAGGED,
                                                ScreenFunctionTest.REJECTED),
                                        null));
        long newPeak = peak() - base;
        long newRetained = usedAfterGc() - base;
        assertThat(SharedFilters.uses(uri)).isEqualTo(SLOTS);
        for (Object h : harnesses) {
            ((AutoCloseable) h).close();
        }
        System.out.printf(
                "%d slots, %d MiB file: private copies via byte[]: retained %d MiB, peak %d MiB;"
                        + " shared streamed copy: retained %d MiB, peak %d MiB%n",
                SLOTS, length / MB, oldRetained / MB, oldPeak / MB, newRetained / MB, newPeak / MB);
    }

    private static List<Object> inParallel(Callable<Object> load) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(SLOTS);
        try {
            List<Future<Object>> futures = new ArrayList<>();
            for (int i = 0; i < SLOTS; i++) {
                futures.add(pool.submit(load));
            }
            List<Object> out = new ArrayList<>();
            for (Future<Object> fu : futures) {
                out.add(fu.get());
            }
            return out;
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Heap in use after full collections: collects until a fresh weakly reachable object has been
     * cleared twice (so the collection ran), with a deadline, instead of sleeping.
     */
    private static long usedAfterGc() {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        for (int cleared = 0; cleared < 2 && System.nanoTime() < deadline; ) {
            java.lang.ref.WeakReference<Object> probe =
                    new java.lang.ref.WeakReference<>(new Object());
            System.gc();
            if (probe.get() == null) {
                cleared++;
            }
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void resetPeaks() {
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                p.resetPeakUsage();
            }
        }
    }

    /** The sum of the heap pools' peaks: an upper bound of the peak heap used. */
    private static long peak() {
        long sum = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                sum += p.getPeakUsage().getUsed();
            }
        }
        return sum;
    }
}
