package io.bloomstream.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** The memory a benchmark run holds: live Java heap and the process's resident set. */
final class Memory {

    private Memory() {}

    /**
     * The heap in use after a full collection (twice: the first may only queue finalizable and
     * reference-held objects): what is live, not what the collector has not reclaimed yet.
     */
    static long liveHeap() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** The process's resident set size from {@code /proc/self/status} (Linux), or -1. */
    static long rss() {
        return status("VmRSS:");
    }

    /**
     * The process's peak resident set size ({@code VmHWM} of {@code /proc/self/status}, Linux)
     * since it started or since the last {@link #resetPeakRss}, or -1.
     */
    static long peakRss() {
        return status("VmHWM:");
    }

    /**
     * Resets the peak resident set size to the current one (writes 5 to {@code
     * /proc/self/clear_refs}, Linux 4.0 and later); does nothing where that is refused. The
     * resident set does not shrink when the collector frees heap: a peak after a reset includes
     * what earlier work left committed.
     */
    static void resetPeakRss() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (IOException | RuntimeException e) {
            // not Linux, or not allowed: the peak is then the process's
        }
    }

    private static long status(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
