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
     * What Ctrl-C does: asks every run in progress to stop with its state saved; if one was asked
     * already, quits at once with status 130.
     *
     * @return whether a run was asked to stop
     */
    public static boolean interrupt() {
        boolean asked = false;
        for (AtomicBoolean flag : RUNS) {
            if (flag.getAndSet(true)) {
                // the second Ctrl-C: do not wait for the savepoint
                new Thread(() -> System.exit(130), "bloomstream-quit").start();
                return true;
            }
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
