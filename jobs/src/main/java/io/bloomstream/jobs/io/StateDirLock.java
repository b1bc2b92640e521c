package io.bloomstream.jobs.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The exclusive hold of one run on a state directory. Two runs on one directory would each delete
 * the other's savepoint and checkpoints when they stop ({@link StateDir#keepOnly}), and the next
 * run would resume from neither: ids would pass again.
 */
public final class StateDirLock implements AutoCloseable {

    /**
     * The lock file in the state directory: a run holds an exclusive lock on it (an
     * operating-system file lock, released when the process ends however it ends) and writes its
     * pid into it.
     */
    public static final String FILE = "bloomstream.lock";

    private final FileChannel channel;
    private final FileLock lock;
    private final OptionalLong previousPid;
    private final Optional<Instant> previousStart;

    private StateDirLock(
            FileChannel channel,
            FileLock lock,
            OptionalLong previousPid,
            Optional<Instant> previousStart) {
        this.channel = channel;
        this.lock = lock;
        this.previousPid = previousPid;
        this.previousStart = previousStart;
    }

    /** When the run of {@link #previousPid} started, if it said. */
    public Optional<Instant> previousStart() {
        return previousStart;
    }

    /**
     * The pid of a run that held the directory and ended without releasing it (killed, or the
     * machine went down): its lock was stale. Empty when the last run released it.
     */
    public OptionalLong previousPid() {
        return previousPid;
    }

    /** Empties the lock file and releases the lock. */
    @Override
    public void close() throws IOException {
        try {
            channel.truncate(0);
            channel.force(true);
        } finally {
            try {
                if (lock != null) {
                    lock.release();
                }
            } finally {
                channel.close();
            }
        }
    }

    /**
     * Takes the exclusive hold on {@code dir} (created if missing) for this run: an operating
     * system lock on {@value #FILE} ({@link FileChannel#tryLock}), and this process's pid and start
     * time written into it for the message another run gets. A lock file that names a pid but is
     * not locked is stale: its run ended without releasing it ({@code kill -9}); it is taken over
     * and {@link #previousPid} names that run. On a file system without locks, the pid in the file
     * decides: refused while that process is alive.
     *
     * @throws StateDir.RefusedException if another run holds the directory, naming its pid
     */
    public static StateDirLock take(Path dir) throws StateDir.RefusedException, IOException {
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.exists(abs) && !Files.isDirectory(abs)) {
            throw new StateDir.RefusedException(
                    "--state-dir " + dir + " is a file, not a directory");
        }
        Files.createDirectories(abs);
        FileChannel channel =
                FileChannel.open(
                        abs.resolve(FILE),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
        try {
            FileLock lock;
            boolean locking = true;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException thisProcess) {
                lock = null;
            } catch (IOException unsupported) {
                lock = null;
                locking = false;
            }
            String holder = contents(channel);
            OptionalLong pid = pid(holder);
            boolean alive =
                    pid.isPresent()
                            && ProcessHandle.of(pid.getAsLong())
                                    .map(ProcessHandle::isAlive)
                                    .orElse(false);
            if (locking
                    ? lock == null
                    : alive && pid.getAsLong() != ProcessHandle.current().pid()) {
                throw new StateDir.RefusedException(
                        "--state-dir "
                                + dir
                                + " is in use by another run ("
                                + (pid.isPresent() ? "pid " + pid.getAsLong() : "pid unknown")
                                + started(holder)
                                + "): two runs on one state directory would delete each other's"
                                + " savepoints and pass ids twice. Wait for it to end, or give"
                                + " another directory");
            }
            channel.truncate(0);
            channel.write(
                    ByteBuffer.wrap(
                            ("pid="
                                            + ProcessHandle.current().pid()
                                            + "\nstarted="
                                            + Instant.now()
                                            + "\n")
                                    .getBytes(StandardCharsets.UTF_8)),
                    0);
            channel.force(true);
            Optional<Instant> since = Optional.empty();
            try {
                String started = started(holder);
                if (pid.isPresent() && !started.isEmpty()) {
                    since = Optional.of(Instant.parse(started.substring(", started ".length())));
                }
            } catch (java.time.format.DateTimeParseException unreadable) {
                // no start time: the pid alone
            }
            return new StateDirLock(channel, lock, pid, since);
        } catch (StateDir.RefusedException | IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    private static String contents(FileChannel channel) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(channel.size(), 4096));
        channel.read(buf, 0);
        return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
    }

    private static OptionalLong pid(String holder) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(?m)^pid=(\\d{1,18})$").matcher(holder);
        return m.find() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
    }

    private static String started(String holder) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(?m)^started=(\\S{1,40})$").matcher(holder);
        return m.find() ? ", started " + m.group(1) : "";
    }
}
