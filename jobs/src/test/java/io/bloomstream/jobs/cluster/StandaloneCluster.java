package io.bloomstream.jobs.cluster;

import io.bloomstream.jobs.Cli;
import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Flink standalone session cluster of separate JVMs started from the Maven artifacts on this
 * test's class path (no Flink distribution needed): one JobManager and TaskManagers on loopback and
 * free ports, sized the way Flink's start scripts size them ({@code BashJavaUtils}). TaskManagers
 * are named {@code tm-0}, {@code tm-1}, ... (their {@code taskmanager.resource-id}, as the REST API
 * shows it), and can be killed with SIGKILL and replaced; so can the JobManager. Closing it stops
 * the processes it started, by their ids.
 */
final class StandaloneCluster implements AutoCloseable {

    /** The --add-opens and --add-exports Flink's default config passes on JDK 17. */
    static final List<String> JDK17_FLAGS =
            List.of(
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    private final Path dir;
    private final Path conf;
    private final String classPath;
    private final int restPort;
    private final List<Process> processes = new ArrayList<>();
    private final Map<String, Process> taskManagers = new LinkedHashMap<>();
    private Process jobManager;
    private int jobManagerStarts;
    private List<String> tmParams;
    private Path recordings;

    StandaloneCluster(Path dir) throws Exception {
        this(dir, Map.of());
    }

    /** A cluster whose config.yaml also has (or overrides with) {@code extraConfig}. */
    StandaloneCluster(Path dir, Map<String, String> extraConfig) throws Exception {
        this.dir = dir;
        this.conf = Files.createDirectories(dir.resolve("conf"));
        this.classPath = flinkClassPath();
        this.restPort = Cli.freePort();
        Map<String, String> config = new LinkedHashMap<>();
        config.put("jobmanager.rpc.address", "localhost");
        config.put("jobmanager.rpc.port", Integer.toString(Cli.freePort()));
        config.put("jobmanager.bind-host", "localhost");
        config.put("jobmanager.memory.process.size", "1024m");
        config.put("rest.address", "localhost");
        config.put("rest.bind-address", "localhost");
        config.put("rest.port", Integer.toString(restPort));
        config.put("blob.server.port", Integer.toString(Cli.freePort()));
        config.put("taskmanager.host", "localhost");
        config.put("taskmanager.bind-host", "localhost");
        config.put("taskmanager.rpc.port", "0");
        config.put("taskmanager.data.port", "0");
        config.put("taskmanager.numberOfTaskSlots", "2");
        config.put("taskmanager.memory.process.size", "1280m");
        config.put("parallelism.default", "2");
        config.put("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
        config.put("io.tmp.dirs", Files.createDirectories(dir.resolve("io")).toString());
        config.putAll(extraConfig);
        StringBuilder yaml = new StringBuilder();
        config.forEach((k, v) -> yaml.append(k).append(": ").append(v).append('\n'));
        Files.writeString(conf.resolve("config.yaml"), yaml);
        Files.writeString(
                conf.resolve("log4j.properties"),
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.out.ref = out",
                        "appender.out.name = out",
                        "appender.out.type = Console",
                        "appender.out.layout.type = PatternLayout",
                        "appender.out.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n",
                        ""));
    }

    /** The REST address, for {@code flink run -m}. */
    String restAddress() {
        return "localhost:" + restPort;
    }

    void start(int taskManagers) throws Exception {
        startJobManager();
        tmParams = resourceParams("GET_TM_RESOURCE_PARAMS");
        for (int i = 0; i < taskManagers; i++) {
            startTaskManager();
        }
        awaitTaskManagers(taskManagers, Duration.ofSeconds(90));
    }

    /** Starts a JobManager (again, after {@link #killJobManager()}: with HA it takes over). */
    void startJobManager() throws Exception {
        List<String> jm = resourceParams("GET_JM_RESOURCE_PARAMS");
        jobManager =
                launch(
                        "jobmanager-" + jobManagerStarts++,
                        jm.get(0),
                        "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                        jm.get(1));
        processes.add(jobManager);
    }

    /**
     * Has the TaskManagers started from now on record a JFR profile ({@code settings=profile}) to
     * {@code dir/tm-N.jfr}, written when the process stops (not when it is killed).
     */
    void recordTaskManagers(Path dir) {
        this.recordings = dir;
    }

    /** Starts one more TaskManager, named {@code tm-N}; returns its name. Does not wait. */
    String startTaskManager() throws IOException {
        String name = "tm-" + taskManagers.size();
        String jvm = tmParams.get(0);
        if (recordings != null) {
            jvm +=
                    " -XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                            + recordings.resolve(name + ".jfr");
        }
        Process p =
                launch(
                        name,
                        jvm,
                        "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                        tmParams.get(1) + " -D taskmanager.resource-id=" + name);
        processes.add(p);
        taskManagers.put(name, p);
        return name;
    }

    /** Kills TaskManager {@code name} with SIGKILL and waits until the process is gone. */
    void killTaskManager(String name) throws InterruptedException {
        kill(taskManagers.get(name));
    }

    /** The process id of TaskManager {@code name}. */
    long taskManagerPid(String name) {
        return taskManagers.get(name).pid();
    }

    /** Kills the JobManager with SIGKILL and waits until the process is gone. */
    void killJobManager() throws InterruptedException {
        kill(jobManager);
    }

    private static void kill(Process p) throws InterruptedException {
        p.destroyForcibly(); // SIGKILL on Linux: no shutdown hooks, no goodbye to the cluster
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("process " + p.pid() + " survived SIGKILL");
        }
    }

    /** The names of the TaskManagers whose process is alive. */
    List<String> liveTaskManagers() {
        return taskManagers.entrySet().stream()
                .filter(e -> e.getValue().isAlive())
                .map(Map.Entry::getKey)
                .collect(Collectors.toList());
    }

    Path dir() {
        return dir;
    }

    /** Runs {@code flink run} (the CLI front end) with {@code args}; returns its exit status. */
    int flinkRun(Path log, String... args) throws Exception {
        List<String> cmd = java();
        cmd.add("org.apache.flink.client.cli.CliFrontend");
        cmd.add("run");
        cmd.add("-m");
        cmd.add(restAddress());
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb =
                new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("FLINK_CONF_DIR", conf.toString());
        Process p = pb.start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("flink run did not finish in 5 minutes; see " + log);
        }
        return p.exitValue();
    }

    /**
     * Runs Flink's SQL client ({@code sql-client.sh -f SCRIPT}, embedded mode) against this cluster
     * with {@code args} (such as {@code -j JAR}); returns its exit status. Its jars join the class
     * path of this process only, as they come from a distribution's {@code opt/}.
     */
    int sqlClient(Path log, Path script, String... args) throws Exception {
        List<String> cmd = java();
        int cp = cmd.indexOf("-cp") + 1;
        cmd.set(cp, cmd.get(cp) + File.pathSeparator + sqlClientClassPath());
        cmd.add("org.apache.flink.table.client.SqlClient");
        cmd.add("-f");
        cmd.add(script.toString());
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb =
                new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("FLINK_CONF_DIR", conf.toString());
        Process p = pb.start();
        p.getOutputStream().close(); // no input but the script
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException(
                    "the SQL client did not finish in 5 minutes; see " + log);
        }
        return p.exitValue();
    }

    private List<String> java() {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(JDK17_FLAGS);
        cmd.add("-Dlog4j.configurationFile=" + conf.resolve("log4j.properties").toUri());
        cmd.add("-cp");
        cmd.add(classPath);
        return cmd;
    }

    private Process launch(String name, String jvmParams, String mainClass, String dynamic)
            throws IOException {
        List<String> cmd = java();
        cmd.addAll(1, Arrays.asList(jvmParams.trim().split("\\s+")));
        cmd.add(mainClass);
        cmd.add("--configDir");
        cmd.add(conf.toString());
        cmd.addAll(Arrays.asList(dynamic.trim().split("\\s+")));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile())
                .start();
    }

    /** JVM parameters and dynamic -D settings, as Flink's start scripts compute them. */
    private List<String> resourceParams(String which) throws Exception {
        List<String> cmd = java();
        cmd.add("org.apache.flink.runtime.util.bash.BashJavaUtils");
        cmd.add(which);
        cmd.add("--configDir");
        cmd.add(conf.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(1, TimeUnit.MINUTES);
        List<String> results =
                out.lines()
                        .filter(l -> l.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:"))
                        .map(l -> l.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length()))
                        .collect(Collectors.toList());
        if (results.size() < 2) {
            if (results.size() == 1 && which.startsWith("GET_JM")) {
                results.add("");
                return results;
            }
            throw new IllegalStateException(which + " failed:\n" + out);
        }
        return results.subList(results.size() - 2, results.size());
    }

    void awaitTaskManagers(int count, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            if (!jobManager.isAlive()) {
                throw new IllegalStateException(
                        "the JobManager exited with "
                                + jobManager.exitValue()
                                + "; logs in "
                                + dir);
            }
            try {
                HttpURLConnection c =
                        (HttpURLConnection)
                                URI.create("http://" + restAddress() + "/taskmanagers")
                                        .toURL()
                                        .openConnection();
                c.setConnectTimeout(1000);
                c.setReadTimeout(1000);
                last = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (last.split("\"id\"", -1).length - 1 >= count) {
                    return;
                }
            } catch (IOException e) {
                last = e.toString(); // not up yet
            }
            TimeUnit.MILLISECONDS.sleep(250); // polling a condition, with a deadline
        }
        throw new IllegalStateException(
                count
                        + " TaskManagers not registered in "
                        + timeout
                        + ": "
                        + last
                        + "; logs in "
                        + dir);
    }

    /** Stops the processes this cluster started, by their ids. */
    @Override
    public void close() throws Exception {
        // Process.destroy() does nothing for a process that has exited (a killed one, whose pid
        // may be reused), unlike a ProcessHandle looked up by pid.
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    List<Long> pids() {
        return processes.stream().map(Process::pid).collect(Collectors.toList());
    }

    /**
     * Flink and its logging from this JVM's class path, without bloomstream, its libraries or the
     * test libraries: the job jar must bring its own.
     */
    static String flinkClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(
                        e ->
                                !e.contains("target" + File.separator + "classes")
                                        && !e.contains("target" + File.separator + "test-classes")
                                        && !e.contains("bloomstream")
                                        && !e.contains("picocli")
                                        && !e.contains("hash4j")
                                        && !e.contains("com" + File.separator + "fasterxml")
                                        && !e.contains("kafka")
                                        && !e.contains("zstd")
                                        && !e.contains("scala")
                                        && !e.contains("junit")
                                        && !e.contains("assertj")
                                        && !e.contains("opentest4j")
                                        && !e.contains("apiguardian")
                                        && !isSqlClient(e))
                .collect(Collectors.joining(File.pathSeparator));
    }

    /**
     * Flink's SQL client, the SQL gateway it embeds and flink-python (whose option parser the
     * client calls): the {@code opt/} jars a distribution's {@code sql-client.sh} adds.
     */
    static String sqlClientClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(StandaloneCluster::isSqlClient)
                .collect(Collectors.joining(File.pathSeparator));
    }

    private static boolean isSqlClient(String entry) {
        String name = Path.of(entry).getFileName().toString();
        return name.startsWith("flink-sql-client-")
                || name.startsWith("flink-sql-gateway-")
                || name.startsWith("flink-python-");
    }
}
