package io.bloomstream.jobs.io;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;

/**
 * The state directory of a stream command ({@code --state-dir DIR}): what a local run remembers for
 * the next one. It holds
 *
 * <ul>
 *   <li>{@value #MANIFEST}: the command and the settings its state depends on, written by the first
 *       run, in a versioned text file ({@code format=1}); a later run with another command or
 *       another value of one of those settings is refused before it starts, naming the setting;
 *   <li>{@code savepoints/}: the savepoint a run takes when it stops (the end of a file input, or
 *       Ctrl-C); only the newest is kept;
 *   <li>{@code checkpoints/}: the job's checkpoints, retained when the job fails or is killed, so
 *       that a crashed run loses nothing either;
 *   <li>{@value #LOCK}: held by the run in progress ({@link StateDirLock#take}), with its pid;
 *   <li>{@value #OUTPUTS}: the output directories its runs wrote into ({@link #wrote}).
 * </ul>
 *
 * A run resumes from the newest of them (by the time its {@code _metadata} was written).
 */
public final class StateDir {

    /** The name of the file that records the command and its settings. */
    public static final String MANIFEST = "bloomstream-state.properties";

    /** The version of the manifest's layout; a newer one is refused. */
    public static final int FORMAT = 1;

    /** The lock file: {@link StateDirLock#FILE}. */
    public static final String LOCK = StateDirLock.FILE;

    /** The output directories written by the runs on the directory, one a line. */
    public static final String OUTPUTS = "outputs.txt";

    private static final String FORMAT_KEY = "format";
    private static final String COMMAND_KEY = "command";
    private static final String NOT_SET = "(not set)";

    private final Path dir;

    private StateDir(Path dir) {
        this.dir = dir;
    }

    /**
     * A view of {@code dir} that only reads it (its newest state, {@link #latest}): no check, no
     * lock, nothing created.
     */
    public static StateDir at(Path dir) {
        return new StateDir(dir.toAbsolutePath().normalize());
    }

    /** The directory. */
    public Path dir() {
        return dir;
    }

    /** Where savepoints go. */
    public Path savepoints() {
        return dir.resolve("savepoints");
    }

    /** Where checkpoints go (a subdirectory per job). */
    public Path checkpoints() {
        return dir.resolve("checkpoints");
    }

    /** A directory that cannot be used, with the reason. */
    public static final class RefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        RefusedException(String message) {
            super(message);
        }
    }

    /**
     * Opens {@code dir} for {@code command} with the settings its state depends on: a new or empty
     * directory gets a manifest of them; an existing one must record the same command and the same
     * values.
     *
     * @param settings option name to value (a null value: not set)
     * @throws RefusedException naming the command or the first setting that differs (by name), or
     *     why the directory is not a state directory
     */
    public static StateDir open(Path dir, String command, Map<String, String> settings)
            throws RefusedException, IOException {
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.exists(abs) && !Files.isDirectory(abs)) {
            throw new RefusedException("--state-dir " + dir + " is a file, not a directory");
        }
        Path manifest = abs.resolve(MANIFEST);
        if (Files.isRegularFile(manifest)) {
            check(dir, read(manifest), command, settings);
        } else {
            if (Files.isDirectory(abs)) {
                try (Stream<Path> entries = Files.list(abs)) {
                    if (entries.anyMatch(e -> !e.getFileName().toString().equals(LOCK))) {
                        throw new RefusedException(
                                "--state-dir "
                                        + dir
                                        + " is not empty and has no "
                                        + MANIFEST
                                        + ": not a state directory of bloomstream; give a new or"
                                        + " empty directory");
                    }
                }
            }
            Files.createDirectories(abs);
            write(manifest, command, settings);
        }
        return new StateDir(abs);
    }

    private static Properties read(Path manifest) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(manifest, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    private static void write(Path manifest, String command, Map<String, String> settings)
            throws IOException {
        StringBuilder text = new StringBuilder();
        text.append("# bloomstream state directory: what its state was written with.\n")
                .append("# A run with another command or other values is refused.\n")
                .append(FORMAT_KEY)
                .append('=')
                .append(FORMAT)
                .append('\n');
        Properties p = new Properties();
        p.setProperty(COMMAND_KEY, command);
        settings.forEach((k, v) -> p.setProperty(k, v == null ? NOT_SET : v));
        // Properties.store escapes values; its comment line (a date) is dropped for stable files
        java.io.StringWriter body = new java.io.StringWriter();
        p.store(body, null);
        body.toString()
                .lines()
                .filter(l -> !l.startsWith("#"))
                .sorted()
                .forEach(l -> text.append(l).append('\n'));
        Path tmp = manifest.resolveSibling(MANIFEST + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            w.write(text.toString());
        }
        Files.move(tmp, manifest, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Refuses a manifest of another format, command or settings. */
    static void check(Path dir, Properties recorded, String command, Map<String, String> settings)
            throws RefusedException {
        String format = recorded.getProperty(FORMAT_KEY);
        if (!String.valueOf(FORMAT).equals(format)) {
            throw new RefusedException(
                    "--state-dir "
                            + dir
                            + ": "
                            + MANIFEST
                            + " has format "
                            + format
                            + ", this version reads format "
                            + FORMAT
                            + " (written by another version of bloomstream?)");
        }
        String was = recorded.getProperty(COMMAND_KEY);
        if (!command.equals(was)) {
            throw new RefusedException(
                    "--state-dir "
                            + dir
                            + " holds the state of '"
                            + was
                            + "', not of '"
                            + command
                            + "': give each command its own directory");
        }
        Map<String, String> all = new java.util.TreeMap<>();
        settings.forEach((k, v) -> all.put(k, v == null ? NOT_SET : v));
        for (String key : recorded.stringPropertyNames()) {
            if (!key.equals(FORMAT_KEY) && !key.equals(COMMAND_KEY)) {
                all.putIfAbsent(key, NOT_SET);
            }
        }
        for (Map.Entry<String, String> e : all.entrySet()) {
            String then = recorded.getProperty(e.getKey(), NOT_SET);
            if (!Objects.equals(then, e.getValue())) {
                String written = with(e.getKey(), then, e.getValue());
                String now = with(e.getKey(), e.getValue(), then);
                throw new RefusedException(
                        "--state-dir "
                                + dir
                                + " was written "
                                + written
                                + ", this run "
                                + (now.startsWith("with ")
                                        ? "has " + now.substring(5)
                                        : "is " + now)
                                + ": its state would not match. Run "
                                + written
                                + ", or start over with a new (or empty) directory");
            }
        }
    }

    /**
     * "without --retention", "with --exact" (a boolean flag: "true" against not set), "with --fpp
     * 0.01".
     */
    private static String with(String key, String value, String other) {
        return NOT_SET.equals(value)
                ? "without " + key
                : "with "
                        + key
                        + ("true".equals(value) && NOT_SET.equals(other) ? "" : " " + value);
    }

    /**
     * Whether a run on this directory wrote into {@code dir} (recorded by {@link #recordOutputs}):
     * a later run resuming the state may write there again, since the state remembers what it
     * wrote.
     */
    public boolean wrote(String dir) throws IOException {
        Path file = this.dir.resolve(OUTPUTS);
        if (!Files.isRegularFile(file)) {
            return false;
        }
        return Files.readAllLines(file, StandardCharsets.UTF_8)
                .contains(OutputDirs.normalized(dir));
    }

    /** Records that this run writes into {@code dirs} (see {@link #wrote}). */
    public void recordOutputs(List<String> dirs) throws IOException {
        Path file = dir.resolve(OUTPUTS);
        java.util.Set<String> all = new java.util.TreeSet<>();
        if (Files.isRegularFile(file)) {
            all.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
        }
        boolean added = false;
        for (String d : dirs) {
            added |= all.add(OutputDirs.normalized(d));
        }
        if (added) {
            Path tmp = dir.resolve(OUTPUTS + ".tmp");
            Files.write(tmp, all, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * The newest savepoint or retained checkpoint in the directory (the directory holding its
     * {@code _metadata}), if any.
     */
    public Optional<Path> latest() throws IOException {
        List<Path> metadata = new ArrayList<>();
        collect(savepoints(), 1, metadata);
        collect(checkpoints(), 2, metadata);
        return metadata.stream().max(Comparator.comparing(StateDir::modified)).map(Path::getParent);
    }

    /**
     * Whether {@code restore} (from {@link #latest}) is a retained checkpoint rather than a
     * savepoint: the run that wrote it did not stop with its state saved (it was killed, or
     * failed).
     */
    public boolean isCheckpoint(Path restore) {
        return restore.toAbsolutePath().normalize().startsWith(checkpoints());
    }

    /** Adds the {@code _metadata} files {@code depth} directories below {@code root}. */
    private static void collect(Path root, int depth, List<Path> into) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root, depth + 1)) {
            files.filter(
                            p ->
                                    p.getFileName().toString().equals("_metadata")
                                            && root.relativize(p).getNameCount() == depth + 1)
                    .forEach(into::add);
        }
    }

    private static FileTime modified(Path p) {
        try {
            return Files.getLastModifiedTime(p);
        } catch (IOException e) {
            return FileTime.fromMillis(0);
        }
    }

    /**
     * Flink's settings for a run on this directory: file system checkpoints under {@link
     * #checkpoints()} retained when the job fails or is cancelled, savepoints under {@link
     * #savepoints()}, and the restore from {@code restore} if not null. State that the new job does
     * not claim is ignored: the file source is a new one on each run (see {@link
     * IoOptions#source}).
     */
    public Configuration configuration(Path restore) {
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints().toUri().toString());
        conf.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, savepoints().toUri().toString());
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore.toUri().toString());
            conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        }
        return conf;
    }

    /**
     * After a run stopped with the savepoint {@code kept}: deletes every other savepoint and the
     * runs' checkpoint directories, all older than it.
     */
    public void keepOnly(Path kept) throws IOException {
        Path keep = kept.toAbsolutePath().normalize();
        for (Path root : List.of(savepoints(), checkpoints())) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (Stream<Path> children = Files.list(root)) {
                for (Path child : (Iterable<Path>) children::iterator) {
                    if (!child.toAbsolutePath().normalize().equals(keep)) {
                        deleteRecursively(child);
                    }
                }
            }
        }
    }

    /** Deletes every savepoint and checkpoint: what a job that ran to its end leaves. */
    public void clear() throws IOException {
        deleteRecursively(savepoints());
        deleteRecursively(checkpoints());
    }

    /** Deletes a file or directory tree; a file already gone is no error. */
    public static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                try {
                    Files.delete(p);
                } catch (NoSuchFileException gone) {
                    // fine
                }
            }
        }
    }
}
