package io.bloomstream.jobs;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;

/**
 * The command line's default heap. A JVM started without a heap size takes a quarter of the
 * machine's memory as its maximum heap, and Flink's embedded mini-cluster grows into it: a {@code
 * sql} run that fits in 512 MB reached 2.3 GB of resident memory on a 23 GB machine. So {@link
 * Main#main} started without an explicit heap size starts itself again, once, with an {@code -Xmx}
 * sized for the command from its flags ({@link JobHeap}; {@value #DEFAULT} for a command its flags
 * do not size; {@value #ENV} overrides it): the same java, class path, JVM options and arguments,
 * the standard streams inherited, its exit status passed on.
 *
 * <p>The launcher passes SIGTERM on to the child ({@link Process#destroy()}); SIGINT it leaves to
 * the child, which the terminal's Ctrl-C reaches as well (the whole foreground process group gets
 * it), so that one Ctrl-C stays one. The child ends soon after the launcher dies ({@code kill -9}),
 * so no orphan keeps a {@code --state-dir} lock. A SIGTERM sent to the whole process group ({@code
 * timeout}, systemd) reaches the child twice, directly and passed on, within a second: the child
 * takes them for one ({@code Interrupts#underLauncher}), so it still stops with its state saved.
 * The child knows itself by {@value #MARKER}, which holds the launcher's process id.
 *
 * <p>Only a JVM of its own relaunches: under {@code flink run}, whose client calls {@link
 * Main#main} from the job jar's class loader, the command runs where it is called ({@link
 * #ownJvm}).
 *
 * <p>An explicit heap is any of {@code -Xmx}, {@code -Xms}, {@code -XX:MaxHeapSize}, {@code
 * -XX:InitialHeapSize}, {@code -XX:MaxRAM}, {@code -XX:MaxRAMPercentage} and the other RAM
 * fractions, among the JVM's options or in {@code JAVA_TOOL_OPTIONS}, {@code JDK_JAVA_OPTIONS} or
 * {@code _JAVA_OPTIONS}. A JVM with an agent or a debugger ({@code -agentlib}, {@code -javaagent},
 * ...) is not started again either: the child could not take the debugger's port.
 */
final class DefaultHeap {

    /** The maximum heap of a command that {@link JobHeap} does not size, when none is given. */
    static final String DEFAULT = "1g";

    /** The environment variable that sets the heap instead of {@link #DEFAULT}. */
    static final String ENV = "BLOOMSTREAM_HEAP";

    /** Set in the child's environment to the launcher's process id. */
    static final String MARKER = "BLOOMSTREAM_LAUNCHER_PID";

    /** A SIGTERM to the process group reaches the child twice within this time: it counts once. */
    private static final long SAME_SIGNAL_MILLIS = 1000;

    /** How often the child asks whether its launcher is alive. */
    private static final long WATCH_MILLIS = 100;

    private static final Pattern SIZE = Pattern.compile("[1-9][0-9]*[kKmMgGtT]?");

    private static final List<String> HEAP_OPTIONS =
            List.of(
                    "-Xmx",
                    "-Xms",
                    "-XX:MaxHeapSize=",
                    "-XX:InitialHeapSize=",
                    "-XX:MaxRAM=",
                    "-XX:MaxRAMPercentage=",
                    "-XX:MinRAMPercentage=",
                    "-XX:InitialRAMPercentage=",
                    "-XX:MaxRAMFraction=",
                    "-XX:MinRAMFraction=",
                    "-XX:InitialRAMFraction=",
                    // options files: what they hold is not known here
                    "-XX:Flags=",
                    "-XX:VMOptionsFile=");

    private static final List<String> AGENT_OPTIONS =
            List.of("-agentlib:", "-agentpath:", "-javaagent:", "-Xrunjdwp", "-Xdebug");

    private static final List<String> OPTION_VARIABLES =
            List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS");

    private DefaultHeap() {}

    /** Whether these JVM options set the heap's size. */
    static boolean setsHeap(List<String> jvmOptions) {
        return jvmOptions.stream()
                .anyMatch(o -> HEAP_OPTIONS.stream().anyMatch(h -> o.startsWith(h)));
    }

    /**
     * Whether a JVM with these options and environment starts itself again with the default heap:
     * not when it is the child already, has an explicit heap, or runs an agent or debugger.
     */
    static boolean relaunches(List<String> jvmOptions, Map<String, String> env) {
        if (env.containsKey(MARKER)) {
            return false;
        }
        List<String> all = new ArrayList<>(jvmOptions);
        for (String variable : OPTION_VARIABLES) {
            String value = env.get(variable);
            if (value != null && !value.isBlank()) {
                all.addAll(List.of(value.trim().split("\\s+")));
            }
        }
        boolean agent = all.stream().anyMatch(o -> AGENT_OPTIONS.stream().anyMatch(o::startsWith));
        return !agent && !setsHeap(all);
    }

    /**
     * Whether the command line was loaded by the JVM's own class path ({@code java -jar}, {@code
     * java -cp}), as a program of its own. Loaded by another class loader, it runs inside another
     * program ({@code flink run}'s client, a cluster's job): that JVM's class path does not hold
     * it, and its heap is that program's to size.
     */
    static boolean ownJvm(ClassLoader loader) {
        return loader == ClassLoader.getSystemClassLoader();
    }

    /**
     * The JVM's options less those it took from {@code JAVA_TOOL_OPTIONS} and the like: the child
     * inherits the variables and reads them itself.
     */
    static List<String> ownOptions(List<String> jvmOptions, Map<String, String> env) {
        List<String> own = new ArrayList<>(jvmOptions);
        for (String variable : OPTION_VARIABLES) {
            String value = env.get(variable);
            if (value != null && !value.isBlank()) {
                for (String option : value.trim().split("\\s+")) {
                    own.remove(option);
                }
            }
        }
        return own;
    }

    /**
     * The heap the child gets: {@value #ENV} if set, else the command's ({@link JobHeap#mib}), else
     * {@value #DEFAULT}.
     *
     * @param args the command line's arguments
     * @param fileBytes the size of a local file, or -1 if it is not one
     * @throws IllegalArgumentException if {@value #ENV} is not a size such as {@code 512m}
     */
    static String heap(Map<String, String> env, String[] args, ToLongFunction<String> fileBytes) {
        String heap = env.get(ENV);
        if (heap == null || heap.isBlank()) {
            long mib = JobHeap.mib(args, fileBytes, DefaultHeap::memoryBytes);
            return mib == 0 ? DEFAULT : mib + "m";
        }
        heap = heap.trim();
        if (!SIZE.matcher(heap).matches()) {
            throw new IllegalArgumentException(
                    ENV + " must be a heap size such as 512m or 2g, was '" + heap + "'");
        }
        return heap.toLowerCase(Locale.ROOT);
    }

    /**
     * The child's command line: {@code java}, the JVM's own options, {@code -Xmx}, then {@code -jar
     * JAR} if the JVM was started with {@code -jar}, else {@code -cp CLASSPATH} and the main class,
     * then the arguments.
     *
     * @param jar the jar the JVM was started with ({@code java -jar}), or null
     */
    static List<String> command(
            String java,
            List<String> jvmOptions,
            String heap,
            String jar,
            String classPath,
            String[] args) {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmOptions);
        command.add("-Xmx" + heap);
        if (jar != null) {
            command.add("-jar");
            command.add(jar);
        } else {
            command.add("-cp");
            command.add(classPath);
            command.add(Main.class.getName());
        }
        command.addAll(List.of(args));
        return command;
    }

    /**
     * Runs the command line in a child JVM with the default heap, if this JVM should: returns the
     * child's exit status, or empty if this JVM runs the command itself (as the child does, after
     * it starts watching its launcher).
     */
    static OptionalInt relaunchIfNeeded(String[] args, PrintStream err) {
        Map<String, String> env = System.getenv();
        String launcher = env.get(MARKER);
        if (launcher != null) {
            exitWithLauncher(launcher);
            io.bloomstream.jobs.console.Interrupts.underLauncher(SAME_SIGNAL_MILLIS);
            return OptionalInt.empty();
        }
        if (!ownJvm(Main.class.getClassLoader())) {
            return OptionalInt.empty();
        }
        List<String> jvmOptions = ManagementFactory.getRuntimeMXBean().getInputArguments();
        Optional<String> java = ProcessHandle.current().info().command();
        String classPath = System.getProperty("java.class.path");
        if (!relaunches(jvmOptions, env)
                || java.isEmpty()
                || classPath == null
                || classPath.isEmpty()) {
            return OptionalInt.empty();
        }
        String heap;
        try {
            heap = heap(env, args, DefaultHeap::localFileBytes);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            return OptionalInt.of(2);
        }
        List<String> command =
                command(
                        java.get(),
                        ownOptions(jvmOptions, env),
                        heap,
                        startedJar(classPath),
                        classPath,
                        args);
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().put(MARKER, Long.toString(ProcessHandle.current().pid()));
        Process child;
        try {
            child = pb.start();
        } catch (IOException e) {
            return OptionalInt.empty(); // run here, with the JVM's own heap
        }
        return OptionalInt.of(waitFor(child));
    }

    /** Waits for the child, passing SIGTERM on; ignores SIGINT (the terminal sent it to both). */
    private static int waitFor(Process child) {
        handle("TERM", signal -> child.destroy());
        handle("INT", signal -> {});
        // a JVM shutdown for another reason (System.exit elsewhere, SIGHUP): stop the child too
        Thread hook = new Thread(child::destroy, "bloomstream-launcher-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        while (true) {
            try {
                int status = child.waitFor();
                Runtime.getRuntime().removeShutdownHook(hook);
                return status;
            } catch (InterruptedException e) {
                // keep waiting: the child decides when the run ends
            } catch (IllegalStateException e) {
                return child.exitValue(); // the JVM is shutting down already
            }
        }
    }

    private static void handle(String name, sun.misc.SignalHandler handler) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal(name), handler);
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            // not on this platform
        }
    }

    /**
     * In the child: ends this JVM within {@value #WATCH_MILLIS} ms of the launcher's end. A thread
     * that asks, rather than {@code ProcessHandle.onExit()}, which for a process that is not a
     * child of this one polls with growing pauses (it took 2 s).
     */
    private static void exitWithLauncher(String launcherPid) {
        Optional<ProcessHandle> launcher;
        try {
            launcher = ProcessHandle.of(Long.parseLong(launcherPid));
        } catch (NumberFormatException e) {
            return;
        }
        if (launcher.isEmpty() || !launcher.get().isAlive()) {
            Runtime.getRuntime().halt(1);
        }
        Thread watch =
                new Thread(
                        () -> {
                            try {
                                while (launcher.get().isAlive()) {
                                    Thread.sleep(WATCH_MILLIS);
                                }
                            } catch (InterruptedException e) {
                                return;
                            }
                            Runtime.getRuntime().halt(1);
                        },
                        "bloomstream-launcher-watch");
        watch.setDaemon(true);
        watch.start();
    }

    /** The machine's memory (a container's limit), or 0 if not known. */
    private static long memoryBytes() {
        try {
            return ((com.sun.management.OperatingSystemMXBean)
                            ManagementFactory.getOperatingSystemMXBean())
                    .getTotalMemorySize();
        } catch (RuntimeException | LinkageError e) {
            return 0;
        }
    }

    /** The size of {@code file} if it names a local regular file, else -1. */
    static long localFileBytes(String file) {
        try {
            Path path =
                    file.startsWith("file:")
                            ? Path.of(java.net.URI.create(file))
                            : file.contains("://") ? null : Path.of(file);
            return path != null && Files.isRegularFile(path) ? Files.size(path) : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The jar {@code java -jar} started, or null: the class path is one jar, the one the command
     * line ({@code sun.java.command}) starts with.
     */
    private static String startedJar(String classPath) {
        String command = System.getProperty("sun.java.command", "");
        boolean oneJar =
                !classPath.contains(java.io.File.pathSeparator)
                        && classPath.endsWith(".jar")
                        && Files.isRegularFile(Path.of(classPath));
        return oneJar && (command.equals(classPath) || command.startsWith(classPath + " "))
                ? classPath
                : null;
    }
}
