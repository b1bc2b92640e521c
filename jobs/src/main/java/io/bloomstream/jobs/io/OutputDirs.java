package io.bloomstream.jobs.io;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Output directories of the file jobs. A stream command's output is a directory of part files with
 * names of their own: a second run into a directory that holds an earlier run's files adds its own
 * beside them, and the ids of both runs are then in it, some twice. So a run into a non-empty
 * directory is refused unless it resumes the {@code --state-dir} whose runs wrote it (which
 * remembers their ids) or {@code --append} says so.
 */
public final class OutputDirs {

    private OutputDirs() {}

    /** How many entries a refusal names. */
    private static final int NAMED = 3;

    /**
     * What {@code dir} holds of an earlier run, for a refusal ("3 entries: _rejected,
     * part-...-0.txt, ..."), or null when it is missing or holds no finished file (any Flink file
     * system). A run that failed before its first checkpoint leaves only hidden in-progress part
     * files, which no run will finish and readers skip: those, and directories holding nothing
     * else, are not an earlier run's output.
     */
    public static String contents(String dir) throws IOException {
        Path p = new Path(dir);
        FileSystem fs = p.getFileSystem();
        if (!fs.exists(p)) {
            return null;
        }
        FileStatus status = fs.getFileStatus(p);
        if (!status.isDir()) {
            return "a file, not a directory";
        }
        FileStatus[] all = fs.listStatus(p);
        List<String> entries = new ArrayList<>();
        for (FileStatus e : all == null ? new FileStatus[0] : all) {
            if (!unfinished(fs, e)) {
                entries.add(e.getPath().getName());
            }
        }
        if (entries.isEmpty()) {
            return null;
        }
        String named =
                entries.stream()
                        .sorted(Comparator.naturalOrder())
                        .limit(NAMED)
                        .collect(Collectors.joining(", "));
        return entries.size()
                + (entries.size() == 1 ? " entry: " : " entries: ")
                + named
                + (entries.size() > NAMED ? ", ..." : "");
    }

    /**
     * Whether {@code entry} is only what a run left unfinished: a hidden in-progress part file of
     * Flink's FileSink ({@code .part-<uuid>-<n>.txt.inprogress.<uuid>}), or a directory holding
     * nothing else (an empty {@code _rejected}, or one with such files only).
     */
    static boolean unfinished(FileSystem fs, FileStatus entry) throws IOException {
        if (!entry.isDir()) {
            return isInProgressPart(entry.getPath().getName());
        }
        FileStatus[] inside = fs.listStatus(entry.getPath());
        if (inside != null) {
            for (FileStatus e : inside) {
                if (!unfinished(fs, e)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether {@code name} is the name of a FileSink's in-progress part file. */
    static boolean isInProgressPart(String name) {
        return name.startsWith(".part-") && name.contains(".inprogress.");
    }

    /**
     * The refusal of {@code flag dir}, or null if the run may write there: it is missing or holds
     * no finished file ({@link #contents}), {@code append} is set, or {@code state} (may be null)
     * recorded it as written by its runs.
     */
    public static String refusal(String flag, String dir, boolean append, StateDir state)
            throws IOException {
        if (append || dir == null) {
            return null;
        }
        String contents = contents(dir);
        if (contents == null || (state != null && state.wrote(dir))) {
            return null;
        }
        return flag
                + " "
                + dir
                + " is not empty ("
                + contents
                + "): this run's part files would go beside an earlier run's, and ids would repeat"
                + " across them. Give a new or empty directory, resume the --state-dir that wrote"
                + " it, or add --append";
    }

    /** {@code dir} as one spelling: a local path absolute and normalized, a URI normalized. */
    static String normalized(String dir) {
        java.net.URI uri = new Path(dir).toUri();
        String s =
                uri.getScheme() == null || "file".equals(uri.getScheme())
                        ? java.nio.file.Path.of(uri.getPath())
                                .toAbsolutePath()
                                .normalize()
                                .toUri()
                                .toString()
                        : uri.normalize().toString();
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}
