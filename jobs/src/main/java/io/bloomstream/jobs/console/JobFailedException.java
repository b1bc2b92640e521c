package io.bloomstream.jobs.console;

import java.nio.file.Path;

/**
 * A job that failed, reported in one line: the root cause of Flink's chain of exceptions (its class
 * and the first line of its message), and where the full log is.
 */
public final class JobFailedException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Flink's log file, or null. */
    public final transient Path logFile;

    private JobFailedException(String message, Throwable cause, Path logFile) {
        super(message, cause);
        this.logFile = logFile;
    }

    /** The failure of a job that threw {@code e}. */
    static JobFailedException of(Throwable e, Path logFile) {
        return new JobFailedException("job failed: " + rootCause(e), e, logFile);
    }

    /**
     * A failure of the run that {@code message} says in full; {@code cause} (may be null) for the
     * log.
     */
    public static JobFailedException of(String message, Throwable cause, Path logFile) {
        return new JobFailedException(message, cause, logFile);
    }

    /** The deepest cause of {@code e}: its simple class name and the first line of its message. */
    public static String rootCause(Throwable e) {
        Throwable root = e;
        java.util.Set<Throwable> seen =
                java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        while (root.getCause() != null && seen.add(root)) {
            root = root.getCause();
        }
        String message =
                root instanceof java.nio.file.FileSystemException
                        ? FileErrors.describe(root)
                        : root.getMessage();
        String first = message == null ? "" : message.strip().split("\\R", 2)[0];
        return root.getClass().getSimpleName() + (first.isEmpty() ? "" : ": " + first);
    }
}
