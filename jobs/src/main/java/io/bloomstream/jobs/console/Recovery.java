package io.bloomstream.jobs.console;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A run that resumes a state directory from a retained checkpoint: the run before it did not stop
 * with its state saved ({@code kill -9}, a crash, a failed job). What that run wrote up to its
 * checkpoint is committed (Flink's file sink commits, on restore, the part files the checkpoint
 * holds); what it wrote after it is in in-progress part files that nothing will commit, and this
 * run writes those records again, since its state is the checkpoint's. This class finds those files
 * when the run starts and removes them when it ends: the hidden {@code .part-*.inprogress.*} files
 * of the run's output directories that existed when it started (and, if the dead run's start is
 * known, were written after it), and that nothing touched during the whole run (a file the restore
 * committed is gone, renamed; a writer still alive would have changed it).
 */
final class Recovery {

    private final Map<Path, Long> candidates;

    private Recovery(Map<Path, Long> candidates) {
        this.candidates = candidates;
    }

    /** The in-progress part files in {@code outputs} now, written after {@code deadRunStart}. */
    static Recovery start(Collection<String> outputs, Optional<Instant> deadRunStart)
            throws IOException {
        Map<Path, Long> found = new LinkedHashMap<>();
        long since = deadRunStart.map(Instant::toEpochMilli).orElse(Long.MIN_VALUE);
        for (FileStatus f : inProgress(outputs)) {
            if (f.getModificationTime() >= since) {
                found.put(f.getPath(), stamp(f));
            }
        }
        return new Recovery(found);
    }

    /**
     * Removes the files found at the start that are unchanged; says how many on {@code err}.
     *
     * @return the files removed
     */
    List<Path> finish(Collection<String> outputs, PrintWriter err) throws IOException {
        List<Path> removed = new ArrayList<>();
        for (FileStatus f : inProgress(outputs)) {
            if (Objects.equals(candidates.get(f.getPath()), stamp(f))) {
                if (f.getPath().getFileSystem().delete(f.getPath(), false)) {
                    removed.add(f.getPath());
                }
            }
        }
        if (!removed.isEmpty()) {
            err.println(
                    "state: removed "
                            + removed.size()
                            + " in-progress part file"
                            + (removed.size() == 1 ? "" : "s")
                            + " of the run that did not stop (written after its last checkpoint;"
                            + " this run wrote their records again)");
            err.flush();
        }
        return removed;
    }

    private static long stamp(FileStatus f) {
        return f.getModificationTime() * 31 + f.getLen();
    }

    /** The file sink's in-progress part files directly in {@code outputs}. */
    private static List<FileStatus> inProgress(Collection<String> outputs) throws IOException {
        List<FileStatus> files = new ArrayList<>();
        for (String dir : outputs) {
            Path p = new Path(dir);
            FileSystem fs = p.getFileSystem();
            if (!fs.exists(p)) {
                continue;
            }
            FileStatus[] entries = fs.listStatus(p);
            if (entries == null) {
                continue;
            }
            for (FileStatus e : entries) {
                String name = e.getPath().getName();
                if (!e.isDir() && name.startsWith(".part-") && name.contains(".inprogress.")) {
                    files.add(e);
                }
            }
        }
        return files;
    }
}
