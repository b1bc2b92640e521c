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
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
