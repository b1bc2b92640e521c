package io.bloomstream.jobs.console;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
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
 */
public final class Logs {

    /** The environment variable that names the directory of log files. */
    public static final String DIR_VARIABLE = "BLOOMSTREAM_LOG_DIR";

    /**
     * The directory of log files when no {@code --log-file} is given: {@code $BLOOMSTREAM_LOG_DIR},
     * else {@code bloomstream-logs} in the temporary directory.
     */
    static Path defaultDir() {
        String dir = System.getenv(DIR_VARIABLE);
        return dir != null && !dir.isEmpty()
                ? Path.of(dir)
                : Path.of(System.getProperty("java.io.tmpdir"), "bloomstream-logs");
    }

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
            file = logFile != null ? logFile : newFile(command);
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
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

    private static Path newFile(String command) {
        String stamp =
                LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS"));
        return defaultDir()
                .resolve(command + "-" + stamp + "-" + ProcessHandle.current().pid() + ".log");
    }
}
