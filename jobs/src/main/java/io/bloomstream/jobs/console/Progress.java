package io.bloomstream.jobs.console;

import io.bloomstream.jobs.io.InputProgress;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The progress line of a local run, on stderr: records read, records per second and, for file input
 * of known size, the share of bytes read and an estimate of the time left. On a terminal it is one
 * line rewritten in place (and erased at the end); otherwise a line every interval (default 5 s)
 * and a last one at the end if any was printed, so short runs print none.
 *
 * <p>Written here rather than with a progress-bar library: the figures come from a polled counter
 * (not from a loop the bar wraps), the line must switch to periodic lines when stderr is not a
 * terminal, and the rest is a few lines of formatting.
 */
public final class Progress implements AutoCloseable {

    /** How often the line is rewritten on a terminal. */
    static final Duration TERMINAL_INTERVAL = Duration.ofMillis(500);

    /** How often a line is printed when stderr is not a terminal. */
    public static final Duration LINE_INTERVAL = Duration.ofSeconds(5);

    /** The time constant of the rates' exponential smoothing, in seconds. */
    static final double SMOOTHING_SECONDS = 2;

    /** The prefix of every progress line. */
    public static final String PREFIX = "progress: ";

    private final PrintWriter err;
    private final InputProgress input;
    private final long totalBytes;
    private final boolean terminal;
    private final long intervalNanos;
    private final LongSupplier clock;
    private final Runnable onTick;
    private final Thread thread;
    private final long start;
    private volatile boolean stopped;
    private int printed;
    private int width;
    // the previous sample, for the rate
    private long lastTime;
    private long lastRecords;
    private long lastBytes;
    private double recordRate = Double.NaN;
    private double byteRate = Double.NaN;

    Progress(
            PrintWriter err,
            InputProgress input,
            long totalBytes,
            boolean terminal,
            Duration interval,
            Runnable onTick,
            LongSupplier clock) {
        this.err = err;
        this.input = input;
        this.totalBytes = totalBytes;
        this.terminal = terminal;
        this.intervalNanos = interval.toNanos();
        this.clock = clock;
        this.onTick = onTick;
        this.start = clock.getAsLong();
        this.lastTime = start;
        this.thread = new Thread(this::loop, "bloomstream-progress");
        this.thread.setDaemon(true);
    }

    /**
     * Starts the progress line of {@code input}.
     *
     * @param totalBytes the input's size in bytes, or -1 if unknown (Kafka)
     * @param interval the interval, or null for the default of the output kind
     * @param onTick run on each tick, before the line (samples metrics)
     */
    public static Progress start(
            PrintWriter err,
            InputProgress input,
            long totalBytes,
            boolean terminal,
            Duration interval,
            Runnable onTick) {
        Progress p =
                new Progress(
                        err,
                        input,
                        totalBytes,
                        terminal,
                        interval != null ? interval : terminal ? TERMINAL_INTERVAL : LINE_INTERVAL,
                        onTick,
                        System::nanoTime);
        p.thread.start();
        return p;
    }

    private void loop() {
        long next = start + intervalNanos;
        while (!stopped) {
            long wait = next - clock.getAsLong();
            if (wait > 0) {
                synchronized (this) {
                    if (stopped) {
                        return;
                    }
                    try {
                        wait(Math.max(1, wait / 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                continue;
            }
            next += intervalNanos;
            tick();
        }
    }

    /** One tick: samples, then prints the line. */
    void tick() {
        onTick.run();
        synchronized (this) {
            if (!stopped) {
                print(line(false));
            }
        }
    }

    /**
     * Stops at the end of the run; erases the line on a terminal, else prints a last line with the
     * totals if any line was printed. A second call (or one after {@link #stopping}) does nothing.
     */
    @Override
    public void close() {
        close(true);
    }

    /**
     * Stops as the run is being stopped with its state saved: erases the line on a terminal, and
     * prints no last line. The job reads on until its savepoint is taken, so the count at this
     * moment is not what the summary counts, and the input is not done.
     */
    public void stopping() {
        close(false);
    }

    private void close(boolean lastLine) {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            notifyAll();
            if (terminal && printed > 0) {
                err.print("\r" + " ".repeat(width) + "\r");
                err.flush();
            } else if (!terminal && printed > 0 && lastLine) {
                print(line(true));
            }
        }
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void print(String line) {
        if (terminal) {
            String padded = line.length() < width ? line + " ".repeat(width - line.length()) : line;
            err.print("\r" + padded);
            width = Math.max(width, line.length());
        } else {
            err.println(line);
        }
        err.flush();
        printed++;
    }

    /**
     * The line for the current counters; at the end, with the average rate of the run.
     *
     * <p>The rates (and so the time left) start from the first sample that saw records read, not
     * from the start of the run: until then the job was starting (a local cluster takes seconds),
     * and the interval in which reading began was partly idle too. A rate from time 0, smoothed
     * from there, made the first estimates of the time left 3 to 5 times too long.
     */
    String line(boolean last) {
        long now = clock.getAsLong();
        long records = input.records();
        long bytes = input.bytes();
        double seconds = (now - lastTime) / 1e9;
        if (last || seconds <= 0) {
            double total = (now - start) / 1e9;
            recordRate = total > 0 ? records / total : Double.NaN;
            byteRate = total > 0 ? bytes / total : Double.NaN;
        } else if (lastRecords == 0 && lastBytes == 0) {
            // nothing read at the last sample: this one is where the rates start from
            recordRate = Double.NaN;
            byteRate = Double.NaN;
        } else {
            // smoothed over about SMOOTHING seconds, whatever the interval, so that a terminal
            // line does not flicker and a line every 5 s follows a rate that ramps up (a weight
            // of 0.2 per sample, at 5 s, lagged by some 20 s while a job warms up)
            double r = (records - lastRecords) / seconds;
            double b = (bytes - lastBytes) / seconds;
            double w = 1 - Math.exp(-seconds / SMOOTHING_SECONDS);
            recordRate = Double.isNaN(recordRate) ? r : w * r + (1 - w) * recordRate;
            byteRate = Double.isNaN(byteRate) ? b : w * b + (1 - w) * byteRate;
        }
        lastTime = now;
        lastRecords = records;
        lastBytes = bytes;
        return format(records, recordRate, bytes, totalBytes, byteRate, last);
    }

    /** The text of a progress line. */
    static String format(
            long records,
            double recordRate,
            long bytes,
            long totalBytes,
            double byteRate,
            boolean last) {
        StringBuilder s = new StringBuilder(PREFIX);
        s.append(String.format(Locale.ROOT, "%,d records", records));
        if (!Double.isNaN(recordRate)) {
            s.append(String.format(Locale.ROOT, ", %,.0f/s", recordRate));
        }
        if (totalBytes > 0) {
            double share = Math.min(1.0, (double) bytes / totalBytes);
            s.append(
                    String.format(
                            Locale.ROOT,
                            ", %.0f%% of %s",
                            Math.floor(share * 100),
                            Bytes.human(totalBytes)));
            if (last) {
                // a run that failed or was stopped is not done
                if (bytes >= totalBytes) {
                    s.append(", done");
                }
            } else if (byteRate > 0 && bytes < totalBytes) {
                s.append(", about ")
                        .append(duration((totalBytes - bytes) / byteRate))
                        .append(" left");
            }
        }
        return s.toString();
    }

    static String duration(double seconds) {
        long s = (long) Math.ceil(seconds);
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d h %02d min", s / 3600, (s % 3600) / 60);
    }

    /**
     * Whether this process's stderr is a terminal. Java 17 cannot ask about stderr alone ({@code
     * System.console()} needs stdin and stdout to be terminals); on Linux {@code /proc/self/fd/2}
     * names the device, elsewhere the console test is used.
     */
    public static boolean stderrIsTerminal() {
        try {
            Path fd = Path.of("/proc/self/fd/2");
            if (Files.exists(fd, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                String target = Files.readSymbolicLink(fd).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            }
        } catch (java.io.IOException | UnsupportedOperationException | SecurityException e) {
            // fall through
        }
        return System.console() != null;
    }
}
