package io.bloomstream.jobs.console;

import java.util.Locale;

/** Byte counts for people. */
public final class Bytes {

    private Bytes() {}

    /** {@code bytes} in B, KiB, MiB, GiB or TiB with two decimals. */
    public static String human(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.2f %s", v, units[u]);
    }
}
