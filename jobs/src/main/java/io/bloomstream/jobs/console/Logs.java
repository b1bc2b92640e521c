package io.bloomstream.jobs.console;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Set;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;

/**
 * Logging of a local run (embedded mini-cluster). Quiet by default: the console shows bloomstream's
 * own warnings and errors (as {@code warning: ...}), everything else (Flink's INFO and its expected
 * warnings) goes to a log file that the summary names. Verbose: everything at INFO on the console,
 * no file. Under {@code flink run} this class is not used: the cluster's logging applies.
 *
 * <p>The log holds the text of rejected and late records (escaped by the operators), so it is kept
 * private: the default directory is one per user, mode 0700 (an existing one must belong to the
 * user, and is set to 0700), and a new log file is created with mode 0600.
 */
public final class Logs {

    /** The environment variable that names the directory of log files. */
    public static final String DIR_VARIABLE = "BLOOMSTREAM_LOG_DIR";

    /**
     * The directory of log files when no {@code --log-file} is given: {@code $BLOOMSTREAM_LOG_DIR},
     * else {@code bloomstream-logs-USER} in the temporary directory (one per user: the log holds
     * the text of rejected and late records).
     */
    static Path defaultDir() {
        return defaultDir(
                System.getenv(DIR_VARIABLE),
                System.getProperty("java.io.tmpdir"),
                System.getProperty("user.name", "user"));
    }

    /** {@link #defaultDir()} for these values of the variable, the temporary directory and user. */
    static Path defaultDir(String variable, String tmpdir, String user) {
        return variable != null && !variable.isEmpty()
                ? Path.of(variable)
                : Path.of(tmpdir, "bloomstream-logs-" + user.replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /**
     * Makes {@code dir} a directory that only this user can read: created with mode 0700, or, if it
     * exists, owned by this user (a directory someone else made in a shared temporary directory is
     * refused) and set to 0700. A symbolic link is refused. On a file system without POSIX
     * permissions, only created.
     *
     * @throws IOException naming the directory, the reason and {@value #DIR_VARIABLE}
     */
    static void privateDir(Path dir) throws IOException {
        boolean posix = posix(dir);
        if (Files.isSymbolicLink(dir)) {
            throw refused(dir, "is a symbolic link");
        }
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                if (posix) {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
                } else {
                    Files.createDirectory(dir);
                }
            } catch (java.nio.file.FileAlreadyExistsException raced) {
                privateDir(dir); // made meanwhile: check it as an existing one
                return;
            }
        } else if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw refused(dir, "is not a directory");
        }
        if (posix) {
            UserPrincipal owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS);
            UserPrincipal me =
                    dir.getFileSystem()
                            .getUserPrincipalLookupService()
                            .lookupPrincipalByName(System.getProperty("user.name"));
            if (!owner.equals(me)) {
                throw refused(dir, "belongs to " + owner.getName() + ", not to you");
            }
            // mode as created (the umask may have narrowed it) or as found
            Files.setPosixFilePermissions(dir, DIR_MODE);
        }
    }

    private static IOException refused(Path dir, String why) {
        return new IOException(
                "log directory "
                        + dir
                        + " "
                        + why
                        + ": Flink's log holds rejected records, so it is kept private; set "
                        + DIR_VARIABLE
                        + " or --log-file to a directory of yours");
    }

    private static boolean posix(Path p) {
        return p.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /**
     * Creates {@code file} (mode 0600) unless it exists, and its missing parent directories (mode
     * 0700). An existing file keeps its mode: the user chose it.
     */
    private static void privateFile(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.exists(parent)) {
            privateDirs(parent);
        }
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (posix(file)) {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE_MODE));
        } else {
            Files.createFile(file);
        }
    }

    /** Creates the missing directories of {@code dir}, the new ones with mode 0700. */
    private static void privateDirs(Path dir) throws IOException {
        Path parent = dir.toAbsolutePath().getParent();
        if (parent != null && !Files.exists(parent)) {
            privateDirs(parent);
        }
        if (!Files.exists(dir)) {
            if (posix(dir)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
                Files.setPosixFilePermissions(dir, DIR_MODE); // whatever the umask
            } else {
                Files.createDirectory(dir);
            }
        }
    }

    private static final Set<PosixFilePermission> DIR_MODE =
            PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE_MODE =
            PosixFilePermissions.fromString("rw-------");

    private Logs() {}

    /**
     * Reconfigures log4j for a local run of {@code command}.
     *
     * @param logFile the log file, or null for a new one under {@link #defaultDir}
     * @return the log file, or null when verbose (everything on the console)
     */
    public static Path configure(String command, boolean verbose, Path logFile) throws IOException {
        ConfigurationBuilder<BuiltConfiguration> b =
                ConfigurationBuilderFactory.newConfigurationBuilder();
        b.setStatusLevel(Level.ERROR);
        b.setConfigurationName("bloomstream-" + command);
        Path file = null;
        if (verbose) {
            b.add(
                    b.newAppender("console", "Console")
                            .addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
                            .add(
                                    b.newLayout("PatternLayout")
                                            .addAttribute(
                                                    "pattern", "%d{HH:mm:ss} %-5p %c{1} - %m%n")));
            b.add(b.newRootLogger(Level.INFO).add(b.newAppenderRef("console")));
        } else {
            if (logFile != null) {
                file = logFile;
            } else {
                Path dir = defaultDir();
                privateDir(dir);
                file = newFile(dir, command);
            }
            privateFile(file);
            // Rejected records are in OUTPUT/_rejected with their reason and counted in the
            // summary: the operators' per-record log lines stay in the file.
            b.add(
                    b.newAppender("console", "Console")
                            .addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
                            .add(
                                    b.newFilter(
                                                    "RegexFilter",
                                                    Filter.Result.DENY,
                                                    Filter.Result.NEUTRAL)
                                            .addAttribute("regex", "(?s)Rejected event \\(.*"))
                            .add(
                                    b.newLayout("PatternLayout")
                                            .addAttribute(
                                                    "pattern",
                                                    "%level{WARN=warning, ERROR=error}: %m%n")));
            b.add(
                    b.newAppender("file", "File")
                            .addAttribute("fileName", file.toString())
                            .addAttribute("append", false)
                            .add(
                                    b.newLayout("PatternLayout")
                                            .addAttribute(
                                                    "pattern",
                                                    "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %c - %m%n")));
            b.add(b.newRootLogger(Level.INFO).add(b.newAppenderRef("file")));
            b.add(
                    b.newLogger("io.bloomstream", Level.INFO)
                            .addAttribute("additivity", false)
                            .add(b.newAppenderRef("file"))
                            .add(b.newAppenderRef("console").addAttribute("level", Level.WARN)));
        }
        Configurator.reconfigure(b.build());
        return file;
    }

    private static Path newFile(Path dir, String command) {
        String stamp =
                LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS"));
        return dir.resolve(command + "-" + stamp + "-" + ProcessHandle.current().pid() + ".log");
    }
}
