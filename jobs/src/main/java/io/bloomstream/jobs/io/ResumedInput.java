package io.bloomstream.jobs.io;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Which file input the source of a {@code --state-dir} reads, and whether a run resumes it: the
 * rule that makes a file run exactly once across a crash.
 *
 * <p>A run that stopped with its state saved (a savepoint: the end of its input, or Ctrl-C) read
 * its input to where it stopped; the next run is a <em>new input</em> (the next day's file, or the
 * same path again) and gets a new file source, which reads it from its first byte. A run that did
 * not stop so ({@code kill -9}, a crash, a failed job) leaves a retained checkpoint as the newest
 * state; the next run <em>recovers</em>: it restores the killed run's file source with the rest of
 * the state, so it reads on from where that checkpoint left the input, and every record lands in
 * the outputs once. A recovery must be given the same input, unchanged, and the same outputs (its
 * checkpoint commits the part files the killed run wrote up to it); otherwise it is refused, or,
 * with {@code --new-input}, the given input is read as a new one.
 *
 * <p>The state directory records the input in {@value #FILE} (format {@value #FORMAT}): the
 * source's id, the input path, its fingerprint (files, bytes, and a SHA-256 of each file's path,
 * length and modification time), the output directories, and when that input's first run started.
 */
public final class ResumedInput {

    /** The file in the state directory. */
    public static final String FILE = "input.properties";

    /** The version of its layout. */
    public static final int FORMAT = 1;

    /** The flag that reads the given input as a new one after a killed run. */
    public static final String NEW_INPUT_FLAG = "--new-input";

    /** What the state directory recorded of the input its source reads. */
    public record Recorded(
            String source,
            String input,
            String fingerprint,
            String described,
            List<String> outputs,
            Instant started) {}

    /**
     * What a run does with its file source: {@code sourceId} names it (a new one, or the killed
     * run's); {@code resumed} is the record of the input it recovers (null for a new input); {@code
     * checkpoint} the retained checkpoint it restores (null if none).
     */
    public record Decision(String sourceId, Recorded resumed, java.nio.file.Path checkpoint) {

        /** Whether the run recovers a killed run's input. */
        public boolean recovers() {
            return resumed != null;
        }
    }

    /** A run the state directory cannot take, with the reason and what to do. */
    public static final class RefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        RefusedException(String message) {
            super(message);
        }
    }

    private ResumedInput() {}

    /**
     * Decides for a run over {@code input} writing {@code outputs} on the state directory {@code
     * stateDir}: the killed run's source if the newest state is its checkpoint and it read the
     * same, unchanged input into the same outputs; a new one ({@code newId}) if the newest state is
     * a savepoint (or none), or {@code newInput}.
     *
     * @throws RefusedException if the newest state is a killed run's checkpoint of another input,
     *     of the same input changed since, or with other outputs
     */
    public static Decision decide(
            java.nio.file.Path stateDir,
            String input,
            List<String> outputs,
            boolean newInput,
            String newId)
            throws RefusedException, IOException {
        StateDir dir = StateDir.at(stateDir);
        java.nio.file.Path latest = dir.latest().orElse(null);
        if (latest == null || !dir.isCheckpoint(latest)) {
            return new Decision(newId, null, null);
        }
        Optional<Recorded> recorded = read(stateDir);
        if (recorded.isEmpty() || newInput) {
            return new Decision(newId, null, latest);
        }
        Recorded r = recorded.get();
        String how =
                " Run again with the same input and outputs to finish it (the run reads on from"
                        + " that checkpoint), or add "
                        + NEW_INPUT_FLAG
                        + " to read this --input from its start as a new input (the rest of "
                        + shown(r.input())
                        + " is then never read)";
        String killed =
                "--state-dir "
                        + stateDir
                        + ": the last run was killed before it finished its input "
                        + shown(r.input())
                        + " (its newest state is the checkpoint "
                        + latest.getFileName()
                        + ")";
        if (!r.input().equals(OutputDirs.normalized(input))) {
            throw new RefusedException(
                    killed + "; this run gives --input " + input + " instead." + how);
        }
        List<String> given = normalized(outputs);
        if (!r.outputs().equals(given)) {
            throw new RefusedException(
                    killed
                            + "; it wrote to "
                            + String.join(
                                    ", ", r.outputs().stream().map(ResumedInput::shown).toList())
                            + ", this run to "
                            + String.join(", ", given.stream().map(ResumedInput::shown).toList())
                            + ": a recovery writes where the killed run wrote (its checkpoint"
                            + " commits the part files written up to it)."
                            + how);
        }
        Fingerprint now = Fingerprint.of(input);
        if (!r.fingerprint().equals(now.hash)) {
            throw new RefusedException(
                    killed
                            + "; the input changed since that run began reading it (then "
                            + r.described()
                            + ", now "
                            + now.described
                            + "): reading on from the checkpoint would skip or repeat lines."
                            + " Restore the input as it was and run again, or add "
                            + NEW_INPUT_FLAG
                            + " to read it from its start as a new input");
        }
        return new Decision(r.source(), r, latest);
    }

    /**
     * Records, in {@code stateDir}, the new input of {@code decision} (nothing when it recovers:
     * the record stays the killed run's).
     */
    public static void record(
            java.nio.file.Path stateDir, Decision decision, String input, List<String> outputs)
            throws IOException {
        if (decision.recovers()) {
            return;
        }
        Fingerprint f = Fingerprint.of(input);
        Properties p = new Properties();
        p.setProperty("format", Integer.toString(FORMAT));
        p.setProperty("source", decision.sourceId());
        p.setProperty("input", OutputDirs.normalized(input));
        p.setProperty("fingerprint", f.hash);
        p.setProperty("described", f.described);
        p.setProperty("started", Instant.now().toString());
        List<String> dirs = normalized(outputs);
        for (int i = 0; i < dirs.size(); i++) {
            p.setProperty("output." + i, dirs.get(i));
        }
        java.nio.file.Path file = stateDir.resolve(FILE);
        java.nio.file.Path tmp = stateDir.resolve(FILE + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            p.store(w, "bloomstream: the input the state's file source reads");
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The record in {@code stateDir}, if any; one of another format is refused. */
    static Optional<Recorded> read(java.nio.file.Path stateDir)
            throws IOException, RefusedException {
        java.nio.file.Path file = stateDir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        if (!Integer.toString(FORMAT).equals(p.getProperty("format"))) {
            throw new RefusedException(
                    "--state-dir "
                            + stateDir
                            + ": "
                            + FILE
                            + " has format "
                            + p.getProperty("format")
                            + ", this version reads format "
                            + FORMAT
                            + " (written by another version of bloomstream?)");
        }
        TreeMap<Integer, String> outputs = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("output.")) {
                outputs.put(
                        Integer.parseInt(key.substring("output.".length())), p.getProperty(key));
            }
        }
        String started = p.getProperty("started");
        return Optional.of(
                new Recorded(
                        p.getProperty("source"),
                        p.getProperty("input"),
                        p.getProperty("fingerprint"),
                        p.getProperty("described"),
                        new ArrayList<>(outputs.values()),
                        started == null ? Instant.EPOCH : Instant.parse(started)));
    }

    /** A recorded path as a user writes it: a local one as a path, another as its URI. */
    static String shown(String uri) {
        return uri.startsWith("file:")
                ? java.nio.file.Path.of(java.net.URI.create(uri)).toString()
                : uri;
    }

    private static List<String> normalized(List<String> dirs) {
        return dirs.stream().map(OutputDirs::normalized).sorted().distinct().toList();
    }

    /**
     * What identifies an input's content cheaply: each file the source reads (hidden ones, starting
     * with . or _, left out), by path, length and modification time.
     */
    static final class Fingerprint {
        final String hash;
        final String described;

        private Fingerprint(String hash, String described) {
            this.hash = hash;
            this.described = described;
        }

        static Fingerprint of(String input) throws IOException {
            Path root = new Path(input);
            FileSystem fs = root.getFileSystem();
            List<FileStatus> files = new ArrayList<>();
            if (fs.exists(root)) {
                collect(fs, fs.getFileStatus(root), files, 0);
            }
            files.sort(java.util.Comparator.comparing(f -> f.getPath().toString()));
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            long bytes = 0;
            for (FileStatus f : files) {
                sha.update(
                        (f.getPath() + "\n" + f.getLen() + "\n" + f.getModificationTime() + "\n")
                                .getBytes(StandardCharsets.UTF_8));
                bytes += f.getLen();
            }
            long newest = files.stream().mapToLong(FileStatus::getModificationTime).max().orElse(0);
            String described =
                    files.size()
                            + (files.size() == 1 ? " file, " : " files, ")
                            + bytes
                            + " bytes, modified "
                            + Instant.ofEpochMilli(newest);
            return new Fingerprint(HexFormat.of().formatHex(sha.digest()), described);
        }

        private static void collect(FileSystem fs, FileStatus s, List<FileStatus> into, int depth)
                throws IOException {
            if (!s.isDir()) {
                into.add(s);
                return;
            }
            if (depth > 64) {
                return;
            }
            FileStatus[] children = fs.listStatus(s.getPath());
            if (children == null) {
                return;
            }
            for (FileStatus c : children) {
                String n = c.getPath().getName();
                if (!n.startsWith(".") && !n.startsWith("_")) {
                    collect(fs, c, into, depth + 1);
                }
            }
        }
    }
}
