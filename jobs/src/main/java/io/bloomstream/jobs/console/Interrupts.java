package io.bloomstream.jobs.console;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Ctrl-C (SIGINT) and SIGTERM during a run that keeps its state ({@code --state-dir}): the first
 * signal asks the run to stop with its state saved, which it does and says so; a second one quits
 * at once (the state of the last checkpoint stays in the directory). While no such run is in
 * progress, the JVM's own handlers apply.
 *
 * <p>A signal handler rather than a shutdown hook: a hook runs while the JVM shuts down, alongside
 * the embedded cluster's own hooks, which close its services; the handler lets the run stop first
 * and then end normally. {@link #interrupt()} is what the handler calls, for tests.
 */
public final class Interrupts {

    /** The flags of the runs in progress that keep their state. */
    private static final Set<AtomicBoolean> RUNS = ConcurrentHashMap.newKeySet();

    private static final String[] SIGNALS = {"INT", "TERM"};
    private static final Object LOCK = new Object();
    private static sun.misc.SignalHandler[] previous;

    /**
     * How long after the first signal another one counts as the same: 0, or, under the launcher of
     * {@code Main} (which passes SIGTERM on), the time a signal sent to the whole process group
     * takes to arrive twice, directly and passed on.
     */
    private static volatile long sameSignalNanos;

    private static volatile long firstSignal;

    private Interrupts() {}

    /**
     * Registers a run; its flag turns true on the first interrupt. Installs the handlers with the
     * first run.
     */
    public static AtomicBoolean register() {
        AtomicBoolean flag = new AtomicBoolean();
        synchronized (LOCK) {
            if (RUNS.isEmpty()) {
                install();
            }
            RUNS.add(flag);
        }
        return flag;
    }

    /** Unregisters a run; restores the JVM's handlers after the last. */
    public static void unregister(AtomicBoolean flag) {
        synchronized (LOCK) {
            if (RUNS.remove(flag) && RUNS.isEmpty()) {
                restore();
            }
        }
    }

    /**
     * This process runs under a launcher that passes SIGTERM on to it: a SIGTERM sent to the whole
     * process group ({@code timeout}, systemd) arrives twice, directly and from the launcher,
     * within {@code millis}; it counts once.
     */
    public static void underLauncher(long millis) {
        sameSignalNanos = millis * 1_000_000L;
    }

    /**
     * What Ctrl-C does: asks every run in progress to stop with its state saved; if one was asked
     * already, quits at once with status 130 (unless the signal is the first one again, passed on
     * by a launcher, see {@link #underLauncher}).
     *
     * @return whether a run was asked to stop
     */
    public static boolean interrupt() {
        long now = System.nanoTime();
        boolean asked = false;
        for (AtomicBoolean flag : RUNS) {
            if (flag.getAndSet(true)) {
                if (now - firstSignal < sameSignalNanos) {
                    return true; // the first signal again, passed on by the launcher
                }
                // the second Ctrl-C: do not wait for the savepoint
                new Thread(() -> System.exit(130), "bloomstream-quit").start();
                return true;
            }
            firstSignal = now;
            asked = true;
        }
        return asked;
    }

    private static void install() {
        previous = new sun.misc.SignalHandler[SIGNALS.length];
        for (int i = 0; i < SIGNALS.length; i++) {
            try {
                previous[i] =
                        sun.misc.Signal.handle(
                                new sun.misc.Signal(SIGNALS[i]), signal -> interrupt());
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                previous[i] = null; // not on this platform, or the JVM keeps it
            }
        }
    }

    private static void restore() {
        if (previous == null) {
            return;
        }
        for (int i = 0; i < SIGNALS.length; i++) {
            if (previous[i] != null) {
                sun.misc.Signal.handle(new sun.misc.Signal(SIGNALS[i]), previous[i]);
            }
        }
        previous = null;
    }
}
